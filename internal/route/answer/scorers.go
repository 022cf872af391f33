package answer

import (
	"context"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// sentenceScorer judges a batch of answer sentences against one turn's
// packed fragments for the Gate: the similarity Scorer (support.go) or
// the judge model (judge.go), as the route's grounding.scorer says. The
// gate's ordering, holding and withholding are the same for both.
type sentenceScorer interface {
	// prepare does what the first batch needs done first (the fragments'
	// unit vectors), unless done; the gate starts it with the answer.
	prepare(ctx context.Context) error
	// score judges sentences, one verdict each in order; Index is left
	// to the caller.
	score(ctx context.Context, sentences []string) ([]Grounding, error)
	// UnitVectors are the fragments' unit vectors the scorer embedded, for
	// the extractive answer that may replace the checked one (nil: none).
	UnitVectors() [][]float32
}

// newSentenceScorer is the scorer settings name, over fragments.
func newSentenceScorer(settings GroundingSettings, checker Checker, fragments []retrieval.Fragment) sentenceScorer {
	if settings.Scorer == podconfig.GroundingJudge {
		return newJudgeScorer(checker.Judge, fragments)
	}
	return NewScorer(checker.Embedders, fragments, settings.threshold())
}
