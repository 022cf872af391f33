package lab

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The committed labels load, every sentence's turn with its fragments,
// and the counts are those test/eval/support/README.md states (a
// relabelling updates both).
func TestSupportLabelsLoad(t *testing.T) {
	labels, err := LoadSupportLabels(filepath.Join("..", "..", "..", "test", "eval", "support"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range labels.Sentences {
		count[s.Label]++
		if s.Misapplied {
			count["misapplied"]++
		}
		if turn := labels.Turns[s.Turn]; len(turn.Fragments) == 0 || len(turn.Markers) != len(turn.Fragments) {
			t.Fatalf("turn %s has %d fragments, %d markers", s.Turn, len(turn.Fragments), len(turn.Markers))
		}
	}
	for _, turn := range labels.Turns {
		if turn.FragmentsContainAnswer {
			count["fragments_contain_answer"]++
		}
		if turn.AnswerAddressesQuestion {
			count["answer_addresses_question"]++
		}
	}
	want := map[string]int{LabelSupported: 101, LabelUnsupported: 94, LabelNoClaim: 82, "misapplied": 34,
		"fragments_contain_answer": 42, "answer_addresses_question": 29}
	if len(labels.Sentences) != 277 || len(labels.Turns) != 62 || !maps.Equal(count, want) {
		t.Errorf("%d sentences, %d turns, %v; the README states 277, 62, %v", len(labels.Sentences), len(labels.Turns), count, want)
	}
}

// A bad line is refused naming the file and line: an unknown label or
// turn, a misapplied sentence not labelled unsupported, a line without
// misapplied, a turn verdict missing or of an unknown turn; so is a turn
// without its verdicts.
func TestSupportLabelsRefuseBadLines(t *testing.T) {
	const (
		answers = `{"turn":"m/q1/generative","model":"m","question_id":"q1","question":"How?","fragments":[{"marker":"S1","text":"Sync waves order resources."}]}`
		turns   = `{"turn":"m/q1/generative","fragments_contain_answer":true,"answer_addresses_question":true}`
	)
	for name, c := range map[string]struct{ turns, labels, want string }{
		"unknown label": {turns, `{"turn":"m/q1/generative","index":0,"sentence":"x","label":"maybe","misapplied":false}`,
			`labels.jsonl:1: label "maybe": want supported, unsupported or no_claim`},
		"unknown turn": {turns, `{"turn":"m/q9/generative","index":0,"sentence":"x","label":"supported","misapplied":false}`,
			`labels.jsonl:1: turn "m/q9/generative" is not in answers.jsonl`},
		"misapplied supported": {turns, `{"turn":"m/q1/generative","index":3,"sentence":"x","label":"supported","misapplied":true}`,
			`labels.jsonl:1: sentence 3 of m/q1/generative: misapplied but labelled supported; a misapplied sentence is unsupported`},
		"misapplied missing": {turns, `{"turn":"m/q1/generative","index":0,"sentence":"x","label":"unsupported"}`,
			`labels.jsonl:1: sentence 0 of m/q1/generative: want misapplied, true or false`},
		"verdict missing": {`{"turn":"m/q1/generative","fragments_contain_answer":false}`, "",
			`turns.jsonl:1: turn "m/q1/generative": want both fragments_contain_answer and answer_addresses_question`},
		"verdict of unknown turn": {turns + "\n" + `{"turn":"m/q9/generative","fragments_contain_answer":true,"answer_addresses_question":false}`, "",
			`turns.jsonl:2: turn "m/q9/generative" is not in answers.jsonl`},
		"turn without verdicts": {"", "", `turns.jsonl: turn "m/q1/generative" of answers.jsonl has no line`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for file, text := range map[string]string{"answers.jsonl": answers, "turns.jsonl": c.turns, "labels.jsonl": c.labels} {
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
// sentences apart, the misapplied ones it passed, per model too.
func TestJudgeAgreementCounts(t *testing.T) {
	labels := SupportLabels{Turns: map[string]LabelledTurn{
		"a": {Turn: "a", Model: "big", Fragments: make([]eval.Unit, 1), Markers: []string{"S1"}},
		"b": {Turn: "b", Model: "small", Fragments: make([]eval.Unit, 1), Markers: []string{"S1"}},
	}, Sentences: []LabelledSentence{
		{Turn: "a", Sentence: "yes one", Label: LabelSupported},
		{Turn: "a", Sentence: "yes two", Label: LabelUnsupported},
		{Turn: "a", Sentence: "no three", Label: LabelSupported},
		{Turn: "b", Sentence: "no four", Label: LabelUnsupported, Misapplied: true},
		{Turn: "b", Sentence: "yes five", Label: LabelNoClaim},
		{Turn: "b", Sentence: "yes six", Label: LabelUnsupported, Misapplied: true},
	}}
	judge := func(_ context.Context, _ string, sentences []string, _ []retrieval.Fragment) ([]answer.Grounding, error) {
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
	if a.Sentences != 5 || a.TruePositives != 1 || a.FalsePositives != 2 || a.FalseNegatives != 1 || a.TrueNegatives != 1 ||
		a.Precision != 1.0/3 || a.Recall != 0.5 || a.NoClaim != 1 || a.NoClaimSupported != 1 || a.Misapplied != 2 || a.MisappliedSupported != 1 {
		t.Fatalf("agreement %+v", a)
	}
	if big := a.ByModel["big"]; big == nil || big.Sentences != 3 || big.Precision != 0.5 {
		t.Errorf("by model: %+v", a.ByModel)
	}
}
