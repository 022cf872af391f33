package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Scoring of whole turns, from their events alone: pure, so each figure
// is table-tested without a model or a store.

// TimedEvent is a turn's event with when it was emitted, counted from the
// turn's start.
type TimedEvent struct {
	turn.Event
	At time.Duration
}

// TurnOutcome is one question's turn in one mode, digested from its
// events.
type TurnOutcome struct {
	Question Question
	Mode     string
	// Shown is the answer as the client reads it: every delta, in order.
	Shown string
	// TTFT is when the first delta came; negative when none did.
	TTFT  time.Duration
	Total time.Duration
	// Cited are the markers the turn cited, explicit and inferred, each
	// once, in order.
	Cited []string
	// Sources are the packed fragments by marker, as retrieval reported
	// them; Cut marks those the budget cut.
	Sources map[string]turn.RetrievalSource
	Cut     map[string]bool
	// Completed is turn.completed's payload; nil when the turn failed.
	Completed  *turn.Completed
	Groundings []answer.Grounding
	// Answerability is the check's verdict before the answer; nil when the
	// route did not ask.
	Answerability *turn.AnswerabilityReport
	Err           string
	// Units are what each packed fragment holds, by marker (filled from
	// the fragments the searches returned), and Allowed the texts whose
	// URLs the answer may render: the packed fragments' and the platform
	// prompt.
	Units   map[string]Unit
	Allowed []string
	// Checked is the grounded ratio the evaluation measured itself with
	// the route's scorer (extractive answers, which the route does not
	// check); nil when not measured.
	Checked *float64
}

// Answered reports whether the turn completed with an answer (not the
// not-found wording).
func (o TurnOutcome) Answered() bool { return o.Completed != nil && !o.Completed.NotFound }

// Digest reads a turn's events through the turn's own fold
// (turn.Outcome), adding when the first delta came.
func Digest(q Question, mode string, events []TimedEvent, total time.Duration) TurnOutcome {
	o := TurnOutcome{Question: q, Mode: mode, TTFT: -1, Total: total,
		Sources: map[string]turn.RetrievalSource{}, Cut: map[string]bool{}}
	var folded turn.Outcome
	for _, e := range events {
		if _, ok := e.Data.(turn.Delta); ok && o.TTFT < 0 {
			o.TTFT = e.At
		}
		folded.Add(e.Event)
	}
	for _, r := range folded.Retrievals {
		for _, s := range r.Sources {
			o.Sources[s.Marker] = s
		}
		for _, d := range r.Dropped {
			if d.Cut {
				o.Cut[d.Marker] = true
			}
		}
	}
	for _, c := range folded.Citations {
		if !slices.Contains(o.Cited, c.Marker) {
			o.Cited = append(o.Cited, c.Marker)
		}
	}
	o.Shown, o.Groundings, o.Answerability, o.Completed = folded.Answer(), folded.Groundings, folded.Answerability, folded.Completed
	if f := folded.Failed; f != nil {
		o.Err = f.Code + ": " + f.Message
	}
	return o
}

// CitedHits counts the turn's cited markers and those whose fragment
// holds the question's gold section. A fragment the budget cut is judged
// by its heading path only: the model saw part of its text.
func CitedHits(o TurnOutcome, gold Gold) (cited, hits int) {
	for _, m := range o.Cited {
		u, ok := o.Units[m]
		if !ok {
			if s, found := o.Sources[m]; found {
				u = Unit{HeadingPath: s.HeadingPath}
			}
		}
		cited++
		if o.Cut[m] {
			u.Text = ""
		}
		if gold.Hit(u, o.Question) {
			hits++
		}
	}
	return cited, hits
}

// urlPattern finds absolute URLs in prose and Markdown targets.
var urlPattern = regexp.MustCompile("(?:https?|ftp)://[^\\s<>\"'`)\\]]+")

// urlKey is a URL as compared: without its fragment, trailing
// punctuation and trailing slash, as the route's link guard compares.
func urlKey(u string) string {
	u = strings.TrimRight(u, ".,;:!?*_")
	if at := strings.IndexByte(u, '#'); at >= 0 {
		u = u[:at]
	}
	return strings.TrimRight(u, "/")
}

// UnsupportedURLs are the URLs of shown that none of allowed holds, each
// once.
func UnsupportedURLs(shown string, allowed []string) []string {
	have := map[string]bool{}
	for _, text := range allowed {
		for _, u := range urlPattern.FindAllString(text, -1) {
			have[urlKey(u)] = true
		}
		// A source URI may be the whole text (a fragment's source).
		have[urlKey(strings.TrimSpace(text))] = true
	}
	var out []string
	for _, u := range urlPattern.FindAllString(shown, -1) {
		if k := urlKey(u); !have[k] && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Brief is a turn's progress line.
func Brief(o TurnOutcome) string {
	c := o.Completed
	switch {
	case c == nil:
		return "failed: " + o.Err
	case c.NotFound:
		return fmt.Sprintf("%5.1f s  not found", o.Total.Seconds())
	}
	ratio := "-"
	if c.GroundedRatio != nil {
		ratio = fmt.Sprintf("%.2f", *c.GroundedRatio)
	}
	return fmt.Sprintf("%5.1f s  first token %.1f s, grounded %s, cited %v", o.Total.Seconds(), o.TTFT.Seconds(), ratio, o.Cited)
}
