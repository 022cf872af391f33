package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The committed labels load: every sentence's turn is there with its
// fragments, every label one of the three, and the set is the size the
// judge's figures rest on (test/eval/support/README.md).
func TestSupportLabelsLoad(t *testing.T) {
	labels, err := LoadSupportLabels(filepath.Join("..", "..", "..", "test", "eval", "support"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range labels.Sentences {
		count[s.Label]++
		if turn := labels.Turns[s.Turn]; len(turn.Fragments) == 0 || len(turn.Markers) != len(turn.Fragments) {
			t.Fatalf("turn %s has %d fragments, %d markers", s.Turn, len(turn.Fragments), len(turn.Markers))
		}
	}
	if len(labels.Sentences) < 200 || count[LabelSupported] == 0 || count[LabelUnsupported] == 0 {
		t.Errorf("labels: %d sentences %v; the judge's figures need at least 200 of both kinds", len(labels.Sentences), count)
	}
}

// A bad label or a sentence of an unknown turn is refused naming the
// file and line.
func TestSupportLabelsRefuseBadLines(t *testing.T) {
	turn := `{"turn":"m/q1/generative","model":"m","question_id":"q1","question":"How?","fragments":[{"marker":"S1","text":"Sync waves order resources."}]}`
	for name, c := range map[string]struct{ labels, want string }{
		"unknown label": {`{"turn":"m/q1/generative","index":0,"sentence":"x","label":"maybe"}`, `labels.jsonl:1: label "maybe": want supported, unsupported or no_claim`},
		"unknown turn":  {`{"turn":"m/q9/generative","index":0,"sentence":"x","label":"supported"}`, `labels.jsonl:1: turn "m/q9/generative" is not in answers.jsonl`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for file, text := range map[string]string{"answers.jsonl": turn, "labels.jsonl": c.labels} {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(text+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := LoadSupportLabels(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadSupportLabels: %v; want %q", err, c.want)
			}
		})
	}
}

// Agreement counts a judge's "supported" against the labels, no-claim
// sentences apart, per model too.
func TestJudgeAgreementCounts(t *testing.T) {
	labels := SupportLabels{Turns: map[string]LabelledTurn{
		"a": {Turn: "a", Model: "big", Fragments: make([]eval.Unit, 1), Markers: []string{"S1"}},
		"b": {Turn: "b", Model: "small", Fragments: make([]eval.Unit, 1), Markers: []string{"S1"}},
	}, Sentences: []LabelledSentence{
		{Turn: "a", Sentence: "yes one", Label: LabelSupported},
		{Turn: "a", Sentence: "yes two", Label: LabelUnsupported},
		{Turn: "a", Sentence: "no three", Label: LabelSupported},
		{Turn: "b", Sentence: "no four", Label: LabelUnsupported},
		{Turn: "b", Sentence: "yes five", Label: LabelNoClaim},
	}}
	judge := func(_ context.Context, sentences []string, _ []retrieval.Fragment) ([]answer.Grounding, error) {
		out := make([]answer.Grounding, len(sentences))
		for i, s := range sentences {
			if strings.HasPrefix(s, "yes") {
				out[i].Status = answer.Supported
			}
		}
		return out, nil
	}
	a, err := JudgeAgreement(context.Background(), "prefix", judge, labels)
	if err != nil {
		t.Fatal(err)
	}
	if a.Sentences != 4 || a.TruePositives != 1 || a.FalsePositives != 1 || a.FalseNegatives != 1 || a.TrueNegatives != 1 ||
		a.Precision != 0.5 || a.Recall != 0.5 || a.NoClaim != 1 || a.NoClaimSupported != 1 {
		t.Fatalf("agreement %+v", a)
	}
	if big := a.ByModel["big"]; big == nil || big.Sentences != 3 || big.Precision != 0.5 {
		t.Errorf("by model: %+v", a.ByModel)
	}
}
