package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The support judge against a person: answer sentences of real models,
// labelled by reading the fragments their turn packed
// (test/eval/support/README.md), scored by the route's grounding check;
// the judge's "supported" is compared with the labels.

// Labels of an answer sentence.
const (
	LabelSupported   = "supported"
	LabelUnsupported = "unsupported"
	LabelNoClaim     = "no_claim"
)

// LabelledTurn is one answer the sentences come from: its question and
// the fragments the route packed for it.
type LabelledTurn struct {
	Turn       string      `json:"turn"`
	Model      string      `json:"model"`
	QuestionID string      `json:"question_id"`
	Question   string      `json:"question"`
	Answerable bool        `json:"answerable"`
	Answer     string      `json:"answer"`
	Fragments  []eval.Unit `json:"fragments"`
	// Markers are the fragments' markers, in Fragments' order.
	Markers []string `json:"-"`
}

// LabelledSentence is one checked sentence of a turn and its label.
type LabelledSentence struct {
	Turn     string `json:"turn"`
	Index    int    `json:"index"`
	Sentence string `json:"sentence"`
	Label    string `json:"label"`
	Note     string `json:"note,omitempty"`
}

// SupportLabels are the labelled sentences and their turns.
type SupportLabels struct {
	Turns     map[string]LabelledTurn
	Sentences []LabelledSentence
}

// LoadSupportLabels reads dir's answers.jsonl and labels.jsonl; a label
// outside the three, or a sentence of a turn answers.jsonl lacks, is an
// error naming the line.
func LoadSupportLabels(dir string) (SupportLabels, error) {
	out := SupportLabels{Turns: map[string]LabelledTurn{}}
	err := eval.ReadJSONLines(filepath.Join(dir, "answers.jsonl"), func(line int, raw []byte) error {
		var t struct {
			LabelledTurn
			Fragments []struct {
				Marker string `json:"marker"`
				eval.Unit
			} `json:"fragments"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		turn := t.LabelledTurn
		for _, f := range t.Fragments {
			turn.Fragments = append(turn.Fragments, f.Unit)
			turn.Markers = append(turn.Markers, f.Marker)
		}
		out.Turns[turn.Turn] = turn
		return nil
	})
	if err != nil {
		return out, err
	}
	err = eval.ReadJSONLines(filepath.Join(dir, "labels.jsonl"), func(line int, raw []byte) error {
		var s LabelledSentence
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		if _, ok := out.Turns[s.Turn]; !ok {
			return fmt.Errorf("turn %q is not in answers.jsonl", s.Turn)
		}
		if !slices.Contains([]string{LabelSupported, LabelUnsupported, LabelNoClaim}, s.Label) {
			return fmt.Errorf("label %q: want %s, %s or %s", s.Label, LabelSupported, LabelUnsupported, LabelNoClaim)
		}
		out.Sentences = append(out.Sentences, s)
		return nil
	})
	return out, err
}

// fragments are a labelled turn's packed fragments as the route's
// check takes them.
func (t LabelledTurn) fragments() []retrieval.Fragment {
	out := make([]retrieval.Fragment, len(t.Fragments))
	for i, u := range t.Fragments {
		out[i] = retrieval.Fragment{ID: t.Markers[i], Marker: t.Markers[i], Text: u.Text, HeadingPath: u.HeadingPath, SourceURI: u.Source}
	}
	return out
}

// Agreement is a judge's "supported" against the labels, over the
// sentences labelled supported or unsupported (no_claim ones apart).
type Agreement struct {
	Judge     string  `json:"judge"`
	Sentences int     `json:"sentences"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	// TruePositives … : the counts behind the figures.
	TruePositives  int `json:"true_positives"`
	FalsePositives int `json:"false_positives"`
	FalseNegatives int `json:"false_negatives"`
	TrueNegatives  int `json:"true_negatives"`
	// NoClaimSupported: no_claim sentences the judge called supported.
	NoClaim          int `json:"no_claim"`
	NoClaimSupported int `json:"no_claim_supported"`
	// ByModel splits the figures by the model that wrote the sentence.
	ByModel map[string]*Agreement `json:"by_model,omitempty"`
}

// Judge judges a turn's sentences against its fragments.
type Judge func(ctx context.Context, sentences []string, fragments []retrieval.Fragment) ([]answer.Grounding, error)

// JudgeAgreement judges every labelled sentence, turn by turn.
func JudgeAgreement(ctx context.Context, name string, judge Judge, labels SupportLabels) (Agreement, error) {
	byTurn := map[string][]LabelledSentence{}
	var order []string
	for _, s := range labels.Sentences {
		if byTurn[s.Turn] == nil {
			order = append(order, s.Turn)
		}
		byTurn[s.Turn] = append(byTurn[s.Turn], s)
	}
	total := Agreement{Judge: name, ByModel: map[string]*Agreement{}}
	for _, id := range order {
		turn, sentences := labels.Turns[id], byTurn[id]
		texts := make([]string, len(sentences))
		for i, s := range sentences {
			texts[i] = s.Sentence
		}
		verdicts, err := judge(ctx, texts, turn.fragments())
		if err != nil {
			return total, fmt.Errorf("judge turn %s: %w", id, err)
		}
		m := total.ByModel[turn.Model]
		if m == nil {
			m = &Agreement{Judge: name}
			total.ByModel[turn.Model] = m
		}
		for i, s := range sentences {
			supported := verdicts[i].Status == answer.Supported
			total.count(s.Label, supported)
			m.count(s.Label, supported)
		}
	}
	total.finish()
	for _, m := range total.ByModel {
		m.finish()
	}
	return total, nil
}

func (a *Agreement) count(label string, supported bool) {
	switch {
	case label == LabelNoClaim:
		a.NoClaim++
		if supported {
			a.NoClaimSupported++
		}
		return
	case label == LabelSupported && supported:
		a.TruePositives++
	case label == LabelSupported:
		a.FalseNegatives++
	case supported:
		a.FalsePositives++
	default:
		a.TrueNegatives++
	}
	a.Sentences++
}

func (a *Agreement) finish() {
	if n := a.TruePositives + a.FalsePositives; n > 0 {
		a.Precision = float64(a.TruePositives) / float64(n)
	}
	if n := a.TruePositives + a.FalseNegatives; n > 0 {
		a.Recall = float64(a.TruePositives) / float64(n)
	}
}

// AgreementText renders judges' agreement with the labels.
func AgreementText(judges []Agreement) string {
	var b strings.Builder
	b.WriteString("\nsupport judge against the labelled sentences (test/eval/support): \"supported\" vs the labels\n")
	b.WriteString("judge                              model                          sentences  precision  recall   TP  FP  FN  TN  no-claim passed\n")
	for _, a := range judges {
		line := func(model string, x *Agreement) {
			fmt.Fprintf(&b, "%-34s %-30s %9d  %9.3f  %6.3f  %3d %3d %3d %3d  %d/%d\n", a.Judge, model, x.Sentences, x.Precision, x.Recall,
				x.TruePositives, x.FalsePositives, x.FalseNegatives, x.TrueNegatives, x.NoClaimSupported, x.NoClaim)
		}
		line("all", &a)
		models := make([]string, 0, len(a.ByModel))
		for m := range a.ByModel {
			models = append(models, m)
		}
		slices.Sort(models)
		for _, m := range models {
			line(m, a.ByModel[m])
		}
	}
	return b.String()
}

// supportAgreement scores the labelled sentences with the route's
// similarity check at the route's threshold.
func (a *answersRun) supportAgreement(ctx context.Context) ([]Agreement, error) {
	labels, err := LoadSupportLabels(a.opts.SupportLabels)
	if err != nil {
		return nil, fmt.Errorf("support labels: %w", err)
	}
	// The route's own threshold decides, as its check would.
	threshold := a.opts.Route.Answer.Grounding.SupportThreshold
	similarity := func(ctx context.Context, sentences []string, fragments []retrieval.Fragment) ([]answer.Grounding, error) {
		scores, err := answer.ScoreSupport(ctx, a.query, sentences, fragments)
		for i := range scores {
			scores[i].Status = answer.Unsupported
			if passes(scores[i], threshold) {
				scores[i].Status = answer.Supported
			}
		}
		return scores, err
	}
	today, err := JudgeAgreement(ctx, fmt.Sprintf("similarity ≥ %.2f", threshold), similarity, labels)
	if err != nil {
		return nil, err
	}
	return []Agreement{today}, nil
}
