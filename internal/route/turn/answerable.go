package turn

import (
	"context"
	"math"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ragroute/ragroute/internal/language"
	"github.com/ragroute/ragroute/internal/lexical"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The answerability check: after packing and before the answer, does
// what was packed answer the question? Below the route's threshold the
// turn says the platform's not-found wording and no answer is written.
// A small model told "say not found when the fragments do not answer"
// writes plausible steps from the neighboring section the search found
// instead; the check decides in code (docs/route.md, "Honest not found").
//
//   - coverage: the share of the question's content words that one packed
//     fragment holds (in any inflection), the best one. An on-topic
//     question about something the documents never describe names it
//     (Velero, a sparse checkout), and the closest section does not; one
//     that joins two things the documents describe apart (draft pull
//     requests, where the docs have pull requests and drafts of
//     something else) finds each in another fragment, never both in one,
//     and an answer lives in one section. Free: no call.
//   - model: the chat model is asked, after the answering call's own
//     messages, whether the fragments hold the answer, one token read as
//     odds (a server with a prompt cache reads only the question). Only
//     generative answers; it depends on the model (weak with a 1.5B).

// Answerability is the check a route runs and its threshold.
type Answerability struct {
	Check podconfig.AnswerabilityCheck
	// MinCoverage is coverage's threshold, MinProbability model's.
	MinCoverage, MinProbability float64
}

// answerabilityQuestion is asked after the fragments. Short: every token
// of it is read before the first token of the answer.
const answerabilityQuestion = "Do the documentation fragments above contain the answer to my question? Reply with one word: yes or no."

// answerabilityCandidates is how many first-token alternatives are read:
// enough that "yes" and "no" are both among them whichever leads.
const answerabilityCandidates = 10

// answerable runs the route's check on what was packed, reporting it; a
// route without one, and the model check on an extractive answer, pass.
// The model is asked after the answer call's own messages.
func (t *turn) answerable(ctx context.Context, ev evidence) (bool, error) {
	a := t.engine.Answer.Answerability
	if a == nil {
		return true, nil
	}
	report := AnswerabilityReport{Check: string(a.Check)}
	switch {
	case a.Check == podconfig.AnswerabilityCoverage:
		report.Score, report.Missing = QuestionCoverage(t.in.Question(), ev.packing.Packed)
		report.Threshold = a.MinCoverage
	case a.Check == podconfig.AnswerabilityModel && t.engine.Answer.Mode != podconfig.AnswerExtractive:
		p, err := t.answerableOdds(ctx, answerMessages(t.in.Messages, ev))
		if err != nil {
			return false, err
		}
		report.Score, report.Threshold = p, a.MinProbability
	default:
		return true, nil
	}
	report.Answerable = report.Score >= report.Threshold
	t.emit(report)
	trace.SpanFromContext(ctx).SetAttributes(attribute.Float64("ragroute.answerability", report.Score))
	return report.Answerable, nil
}

// answerableOdds asks the model whether the answering call's messages
// hold the answer: P(yes) of one greedy token.
func (t *turn) answerableOdds(ctx context.Context, messages []model.Message) (float64, error) {
	ask := append(append([]model.Message{}, messages...), model.Message{Role: model.RoleUser, Content: answerabilityQuestion})
	greedy := 0.0
	reply, err := t.callModel(ctx, modelCall{span: "answerable", stage: "model_answerable", messages: ask,
		gen: model.Generation{MaxTokens: 1, Temperature: &greedy, TopLogprobs: answerabilityCandidates}})
	if err != nil {
		return 0, err
	}
	return yesProbability(reply.FirstToken), nil
}

// yesProbability is P(yes) / (P(yes) + P(no)) over the first token's
// candidates, any case and spacing of either word; 1 when neither is
// among them (the check cannot tell, so it does not refuse).
func yesProbability(candidates []model.TokenLogprob) float64 {
	var yes, no float64
	for _, c := range candidates {
		switch strings.ToLower(strings.TrimSpace(c.Token)) {
		case "yes":
			yes += math.Exp(c.Logprob)
		case "no":
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
// in any inflection (stem); a question without content words is covered,
// one with no fragment is not.
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
				held[stem(w)] = true
			}
		}
		var missing []string
		for _, w := range words {
			if !held[stem(w)] {
				missing = append(missing, w)
			}
		}
		if len(missing) < len(fewest) {
			fewest = missing
		}
	}
	return 1 - float64(len(fewest))/float64(len(words)), fewest
}

// stem folds a word's inflections onto one form: a Russian word's by
// Snowball, as keyword search does («согласование», «согласования»); an
// English word's coarsely, enough that "clusters" and "cluster",
// "policies" and "policy", "configured", "configuring" and "configure"
// meet.
func stem(w string) string {
	if language.HasCyrillic(w) {
		return lexical.RussianTerm(w)
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:len(w)-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}
