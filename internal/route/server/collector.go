package server

import (
	"strings"

	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// collector folds a turn's events into its outcome: the answer's text,
// the facade's extension, the usage and the error. Only the driver makes
// one (drive.go), so that a shared fold can take its place in one spot.
type collector struct {
	ext     extension
	content strings.Builder
	usage   turn.Usage
	err     *turn.Failed
}

// add folds ev in.
func (c *collector) add(ev turn.Event) {
	switch d := ev.Data.(type) {
	case turn.Delta:
		c.content.WriteString(d.Text)
	case turn.Citation:
		c.ext.Citations = append(c.ext.Citations, d)
	case turn.RetrievalReport:
		if d.Round > 0 { // a harness search; the answer's own fragments come last, round 0
			c.ext.Harness = append(c.ext.Harness, harnessStep{ev.Type, d})
			break
		}
		c.ext.Sources = append(c.ext.Sources, d.Sources...)
	case turn.ToolCall:
		if d.Round > 0 {
			c.ext.Harness = append(c.ext.Harness, harnessStep{ev.Type, d})
		}
	case turn.RoundStarted, turn.MemorySaved, turn.Finalized:
		c.ext.Harness = append(c.ext.Harness, harnessStep{ev.Type, d})
	case answer.Grounding:
		c.ext.Grounding = append(c.ext.Grounding, d)
	case turn.Completed:
		c.usage, c.ext.NotFound, c.ext.GroundedRatio, c.ext.GroundingUnchecked = d.Usage, d.NotFound, d.GroundedRatio, d.GroundingUnchecked
		c.ext.AnswerReplaced, c.ext.WithheldSentences, c.ext.LinksRemoved = d.AnswerReplaced, d.Withheld, d.LinksRemoved
	case turn.Failed:
		c.err = &d
	}
}

// newCollector folds the events of turn turnID.
func newCollector(turnID string) *collector {
	return &collector{ext: extension{TurnID: turnID, Citations: []turn.Citation{}, Sources: []turn.RetrievalSource{}}}
}
