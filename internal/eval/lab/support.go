package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	// FragmentsContainAnswer and AnswerAddressesQuestion are a person's
	// verdicts on the whole turn (turns.jsonl): a sentence can be true of
	// its fragments while the turn fails the question either way.
	FragmentsContainAnswer  bool `json:"-"`
	AnswerAddressesQuestion bool `json:"-"`
}

// LabelledSentence is one checked sentence of a turn and its label.
type LabelledSentence struct {
	Turn     string `json:"turn"`
	Index    int    `json:"index"`
	Sentence string `json:"sentence"`
	Label    string `json:"label"`
	// Misapplied: a fragment states the sentence's content, but about
	// another feature, setting or situation than the question asks, and
	// the sentence offers it as the answer; always unsupported. It is the
	// failure a sentence-to-fragment score cannot see.
	Misapplied bool   `json:"misapplied"`
	Note       string `json:"note,omitempty"`
}

// SupportLabels are the labelled sentences and their turns.
type SupportLabels struct {
	Turns     map[string]LabelledTurn
	Sentences []LabelledSentence
}

// LoadSupportLabels reads dir's answers.jsonl, turns.jsonl and
// labels.jsonl. A bad line is an error naming the file and line: a label
// outside the three, a misapplied sentence not labelled unsupported, a
// line without its verdicts, a sentence or turn verdict of a turn
// answers.jsonl lacks; so is a turn without its verdicts.
func LoadSupportLabels(dir string) (SupportLabels, error) {
	out := SupportLabels{Turns: map[string]LabelledTurn{}}
	if err := loadLabelledTurns(filepath.Join(dir, "answers.jsonl"), out.Turns); err != nil {
		return out, err
	}
	if err := loadTurnVerdicts(filepath.Join(dir, "turns.jsonl"), out.Turns); err != nil {
		return out, err
	}
	sentences, err := loadLabelledSentences(filepath.Join(dir, "labels.jsonl"), out.Turns)
	out.Sentences = sentences
	return out, err
}

// loadLabelledTurns reads answers.jsonl into turns, by turn.
func loadLabelledTurns(path string, turns map[string]LabelledTurn) error {
	return eval.ReadJSONLines(path, func(line int, raw []byte) error {
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
		turns[turn.Turn] = turn
		return nil
	})
}

// turnVerdicts is a turns.jsonl line; both verdicts must be written out,
// so that a line missing one is refused rather than read as false.
type turnVerdicts struct {
	Turn                    string `json:"turn"`
	FragmentsContainAnswer  *bool  `json:"fragments_contain_answer"`
	AnswerAddressesQuestion *bool  `json:"answer_addresses_question"`
}

// loadTurnVerdicts reads turns.jsonl onto turns: one line for every
// turn, none for a turn answers.jsonl lacks.
func loadTurnVerdicts(path string, turns map[string]LabelledTurn) error {
	seen := map[string]bool{}
	err := eval.ReadJSONLines(path, func(line int, raw []byte) error {
		var v turnVerdicts
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		turn, ok := turns[v.Turn]
		switch {
		case !ok:
			return fmt.Errorf("turn %q is not in answers.jsonl", v.Turn)
		case seen[v.Turn]:
			return fmt.Errorf("turn %q again", v.Turn)
		case v.FragmentsContainAnswer == nil || v.AnswerAddressesQuestion == nil:
			return fmt.Errorf("turn %q: want both fragments_contain_answer and answer_addresses_question", v.Turn)
		}
		seen[v.Turn] = true
		turn.FragmentsContainAnswer, turn.AnswerAddressesQuestion = *v.FragmentsContainAnswer, *v.AnswerAddressesQuestion
		turns[v.Turn] = turn
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(turns)) {
		if !seen[id] {
			return fmt.Errorf("%s: turn %q of answers.jsonl has no line", path, id)
		}
	}
	return nil
}

// sentenceLine is a labels.jsonl line; misapplied must be written out,
// true or false.
type sentenceLine struct {
	LabelledSentence
	Misapplied *bool `json:"misapplied"`
}

// loadLabelledSentences reads labels.jsonl, each sentence of a turn of
// turns.
func loadLabelledSentences(path string, turns map[string]LabelledTurn) ([]LabelledSentence, error) {
	var out []LabelledSentence
	err := eval.ReadJSONLines(path, func(line int, raw []byte) error {
		var l sentenceLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		s := l.LabelledSentence
		if _, ok := turns[s.Turn]; !ok {
			return fmt.Errorf("turn %q is not in answers.jsonl", s.Turn)
		}
		if !slices.Contains([]string{LabelSupported, LabelUnsupported, LabelNoClaim}, s.Label) {
			return fmt.Errorf("label %q: want %s, %s or %s", s.Label, LabelSupported, LabelUnsupported, LabelNoClaim)
		}
		if l.Misapplied == nil {
			return fmt.Errorf("sentence %d of %s: want misapplied, true or false", s.Index, s.Turn)
		}
		if s.Misapplied = *l.Misapplied; s.Misapplied && s.Label != LabelUnsupported {
			return fmt.Errorf("sentence %d of %s: misapplied but labelled %s; a misapplied sentence is %s", s.Index, s.Turn, s.Label, LabelUnsupported)
		}
		out = append(out, s)
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
	// Misapplied counts the misapplied sentences (all unsupported);
	// MisappliedSupported those the judge called supported: false
	// positives only a judge that reads the question can avoid.
	Misapplied          int `json:"misapplied"`
	MisappliedSupported int `json:"misapplied_supported"`
	// ByModel splits the figures by the model that wrote the sentence.
	ByModel map[string]*Agreement `json:"by_model,omitempty"`
}

// Judge judges a turn's sentences against its fragments, as answers to
// its question.
type Judge func(ctx context.Context, question string, sentences []string, fragments []retrieval.Fragment) ([]answer.Grounding, error)

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
		verdicts, err := judge(ctx, turn.Question, texts, turn.fragments())
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
			total.count(s, supported)
			m.count(s, supported)
		}
	}
	total.finish()
	for _, m := range total.ByModel {
		m.finish()
	}
	return total, nil
}

func (a *Agreement) count(s LabelledSentence, supported bool) {
	if s.Misapplied {
		a.Misapplied++
		if supported {
			a.MisappliedSupported++
		}
	}
	switch label := s.Label; {
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
	b.WriteString("judge                              model                          sentences  precision  recall   TP  FP  FN  TN  no-claim passed  misapplied passed\n")
	for _, a := range judges {
		line := func(model string, x *Agreement) {
			fmt.Fprintf(&b, "%-34s %-30s %9d  %9.3f  %6.3f  %3d %3d %3d %3d  %-15s  %s\n", a.Judge, model, x.Sentences, x.Precision, x.Recall,
				x.TruePositives, x.FalsePositives, x.FalseNegatives, x.TrueNegatives,
				fmt.Sprintf("%d/%d", x.NoClaimSupported, x.NoClaim), fmt.Sprintf("%d/%d", x.MisappliedSupported, x.Misapplied))
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
// similarity check at the route's threshold and, when the evaluation has
// a judge model, with the judge scorer (support_judge.go).
func (a *answersRun) supportAgreement(ctx context.Context) ([]Agreement, error) {
	labels, err := LoadSupportLabels(a.opts.SupportLabels)
	if err != nil {
		return nil, fmt.Errorf("support labels: %w", err)
	}
	// The route's own threshold decides, as its check would.
	threshold := a.opts.Route.Answer.Grounding.SupportThreshold
	similarity := func(ctx context.Context, _ string, sentences []string, fragments []retrieval.Fragment) ([]answer.Grounding, error) {
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
	if a.opts.Judge == nil {
		return []Agreement{today}, nil
	}
	judged, err := JudgeAgreement(ctx, "judge "+a.opts.JudgeModel, a.judgeScorer(), labels)
	if err != nil {
		return nil, err
	}
	return []Agreement{today, judged}, nil
}
