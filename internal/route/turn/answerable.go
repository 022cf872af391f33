package turn

import (
	"context"
	"fmt"
	"math"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The answerability check: after packing and before the answer, does
// what was packed answer the question? When a rule refuses, the turn
// first searches once more (research.go), then says the platform's
// not-found wording and no answer is written. A small model told "say not
// found when the fragments do not answer" writes plausible steps from the
// nearby section the search found instead; the check decides in
// code (docs/route.md, "Honest not found").
//
//   - names: a name the question uses (a tool, a resource kind, an
//     identifier: retrieval.DistinctiveTerms) that no packed fragment
//     holds. Users reword what they ask in plain words the documents never
//     use; they do not rename what they ask about. Nothing to fit: it
//     transfers across corpora. Free.
//   - coverage: the share of the question's content words that one packed
//     fragment holds (in any inflection), the best one. An on-topic
//     question that joins two things the documents describe apart (draft
//     pull requests, where the docs have pull requests and drafts of
//     something else) finds each in another fragment, never both in one,
//     and an answer lives in one section. Free.
//   - relevance: the cross-encoder's relevance of the best packed
//     fragment (a route that reranks with one). Free: the search read it.
//   - model: the chat model (or the route's judge, when it has one:
//     judge.go) is asked, after the answering call's own messages,
//     whether the fragments hold the answer, one token read as odds (the
//     chat model's server with a prompt cache reads only the question;
//     the judge's, another server, reads it all). Only generative
//     answers; it depends on the model (weak with a 1.5B).

// Answerability is the check a route runs and its thresholds.
type Answerability struct {
	Check podconfig.AnswerabilityCheck
	// MinCoverage is coverage's threshold, MinProbability model's.
	MinCoverage, MinProbability float64
	// RequireNames refuses a question whose names no packed fragment
	// holds.
	RequireNames bool
	// MinRelevance refuses when the best packed fragment's cross-encoder
	// relevance is below it; 0 reads none.
	MinRelevance float64
	// CalibratedBy names what set the thresholds, for the report.
	CalibratedBy string
}

// Rules of the answerability check, as a report names those that refused.
const (
	refusedByNames     = "names"
	refusedByRelevance = "relevance"
)

// answerabilityQuestion is asked after the fragments. Short: every token
// of it is read before the first token of the answer.
const answerabilityQuestion = "Do the documentation fragments above contain the answer to my question? Reply with one word: yes or no."

// answerabilityCandidates is how many first-token alternatives are read:
// enough that "yes" and "no" are both among them whichever leads.
const answerabilityCandidates = 10

// check runs the route's answerability rules on what ev packed and
// reports them; nil when no rule applies (none set, nothing packed, or
// only the model check on an extractive answer). The model is asked after
// the answer call's own messages.
func (t *turn) check(ctx context.Context, ev evidence) (*AnswerabilityReport, error) {
	a, packed := t.engine.Answer.Answerability, ev.packing.Packed
	if a == nil || len(packed) == 0 {
		return nil, nil
	}
	question := t.in.Question()
	r := AnswerabilityReport{Check: string(a.Check), CalibratedBy: a.CalibratedBy}
	r.Coverage, r.Missing = QuestionCoverage(question, packed)
	r.MissingNames = retrieval.MissingNames(question, packedText(packed))
	if t.engine.Searcher.ScoresRelevance() {
		best := 0.0
		for _, f := range packed {
			best = max(best, f.Score)
		}
		r.Relevance = &best
	}
	asksModel := a.Check == podconfig.AnswerabilityModel && t.engine.Answer.Mode != podconfig.AnswerExtractive
	switch {
	case a.Check == podconfig.AnswerabilityCoverage:
		r.Score, r.Threshold = r.Coverage, a.MinCoverage
	case asksModel:
		p, err := t.answerableOdds(ctx, answerMessages(t.in.Messages, ev))
		if err != nil {
			return nil, err
		}
		r.Score, r.Threshold = p, a.MinProbability
	case !a.RequireNames && a.MinRelevance == 0:
		return nil, nil
	default:
		r.Check = string(podconfig.AnswerabilityOff)
	}
	if r.Score < r.Threshold {
		r.Refused = append(r.Refused, r.Check)
	}
	if a.RequireNames && len(r.MissingNames) > 0 {
		r.Refused = append(r.Refused, refusedByNames)
	}
	if a.MinRelevance > 0 && r.Relevance != nil && *r.Relevance < a.MinRelevance {
		r.Refused = append(r.Refused, refusedByRelevance)
	}
	r.Answerable = len(r.Refused) == 0
	t.emit(r)
	trace.SpanFromContext(ctx).SetAttributes(attribute.Float64("ragroute.answerability", r.Score),
		attribute.Bool("ragroute.answerable", r.Answerable))
	return &r, nil
}

// packedText is what the names rule reads of the packed fragments, lower
// case: their text, titles, heading paths and sources.
func packedText(packed []retrieval.Fragment) string {
	var b strings.Builder
	for _, f := range packed {
		for _, s := range append([]string{f.Text, f.Title, f.SourceURI}, f.HeadingPath...) {
			b.WriteString(strings.ToLower(s))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// answerableOdds asks the model (the judge, when the route has one)
// whether the answering call's messages hold the answer: P(yes) of one
// greedy token.
func (t *turn) answerableOdds(ctx context.Context, messages []model.Message) (float64, error) {
	ask := append(append([]model.Message{}, messages...), model.Message{Role: model.RoleUser, Content: answerabilityQuestion})
	greedy := 0.0
	call := modelCall{span: "answerable", stage: "model_answerable", messages: ask,
		gen: model.Generation{MaxTokens: 1, Temperature: &greedy, TopLogprobs: answerabilityCandidates}}
	if t.engine.Answer.Judge != nil {
		call.span, call.stage, call.judge = "judge_answerable", "judge_answerable", true
	}
	reply, err := t.callModel(ctx, call)
	switch {
	case err != nil && call.judge:
		return 0, judgeFailed(fmt.Errorf("answerability: %w", err))
	case err != nil:
		return 0, err
	}
	return yesProbability(reply.FirstToken), nil
}

// yesProbability is P(yes) / (P(yes) + P(no)) over the first token's
// candidates, any case and spacing of either word, in English or in
// Russian (a model told to answer in Russian may say «да»); 1 when neither is
// among them (the check cannot tell, so it does not refuse).
func yesProbability(candidates []model.TokenLogprob) float64 {
	var yes, no float64
	for _, c := range candidates {
		switch strings.ToLower(strings.TrimSpace(c.Token)) {
		case "yes", "да":
			yes += math.Exp(c.Logprob)
		case "no", "нет":
			no += math.Exp(c.Logprob)
		}
	}
	if yes+no == 0 {
		return 1
	}
	return yes / (yes + no)
}

// QuestionCoverage is the share of the question's content words that the
// best-covering fragment (its text, title, heading path and source)
// holds, and the words it lacks. A word counts when the fragment holds it
// in any inflection (retrieval.WordStem); a question without content
// words is covered, one with no fragment is not.
func QuestionCoverage(question string, fragments []retrieval.Fragment) (float64, []string) {
	words := retrieval.ContentWords(question)
	if len(words) == 0 {
		return 1, nil
	}
	fewest := words // no fragment: nothing is covered
	for _, f := range fragments {
		held := map[string]bool{}
		for _, text := range append([]string{f.Text, f.Title, f.SourceURI}, f.HeadingPath...) {
			for _, w := range retrieval.ContentWords(text) {
				held[retrieval.WordStem(w)] = true
			}
		}
		var missing []string
		for _, w := range words {
			if !held[retrieval.WordStem(w)] {
				missing = append(missing, w)
			}
		}
		if len(missing) < len(fewest) {
			fewest = missing
		}
	}
	return 1 - float64(len(fewest))/float64(len(words)), fewest
}
