package eval

import (
	"cmp"
	"fmt"
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
	// Answerability is the check's verdict before the answer (after a
	// re-search, the re-search's); nil when the route did not ask.
	Answerability *turn.AnswerabilityReport
	// Refusals are the model's answers with the not-found wording;
	// Researched: the turn searched once more in other words.
	Refusals   []turn.ModelRefused
	Researched bool
	Err        string
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
	o.Refusals, o.Researched = folded.Refusals, len(folded.Research) > 0
	if f := folded.Failed; f != nil {
		o.Err = f.Code + ": " + f.Message
	}
	return o
}

// GoldPacked says whether a packed fragment holds the question's gold
// section, judged as CitedHits judges a cited one.
func GoldPacked(o TurnOutcome, gold Gold) bool {
	for m := range o.Sources {
		if gold.Hit(readAs(o, m), o.Question) {
			return true
		}
	}
	return false
}

// CitedHits counts the turn's cited markers and those whose fragment
// holds the question's gold section.
func CitedHits(o TurnOutcome, gold Gold) (cited, hits int) {
	for _, m := range o.Cited {
		cited++
		if gold.Hit(readAs(o, m), o.Question) {
			hits++
		}
	}
	return cited, hits
}

// readAs is the fragment marker m stood for, as the model read it: its
// unit, or its heading path when the searches' fragments lack it; a
// fragment the budget cut is judged by its heading path only (the model
// saw part of its text).
func readAs(o TurnOutcome, m string) Unit {
	u, ok := o.Units[m]
	if !ok {
		if s, found := o.Sources[m]; found {
			u = Unit{HeadingPath: s.HeadingPath}
		}
	}
	if o.Cut[m] {
		u.Text = ""
	}
	return u
}

// UnsupportedURLs are the links of shown that none of allowed holds, each
// once, in the order shown has them: those the route's link guard would
// remove from shown if the answer could render only allowed's links. The
// guard itself finds and judges them (answer.LinkGuard: link and
// definition targets, HTML src and href values, bare URLs, each keyed
// without its fragment and trailing slash), so the score and the route
// agree on what a link is and which ones are the same.
func UnsupportedURLs(shown string, allowed []string) []string {
	have := answer.AllowedLinks{}
	for _, text := range allowed {
		have.AddText(text)
		have.AddURL(text) // a source URI may be the whole text (a fragment's source)
	}
	found, kept := answer.AllowedLinks{}, answer.AllowedLinks{}
	found.AddText(shown)
	kept.AddText(guarded(shown, have))
	var out []string
	for key := range found {
		if !kept[key] {
			out = append(out, key)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(firstAt(shown, a), firstAt(shown, b)), strings.Compare(a, b))
	})
	return out
}

// guarded is text as the route's link guard lets it through when only
// the links of allowed may be rendered.
func guarded(text string, allowed answer.AllowedLinks) string {
	var b strings.Builder
	pipe := answer.NewPipe(func(s string) error { b.WriteString(s); return nil }, answer.NewLinkGuard(allowed))
	// The sink never fails, so neither does the pipe.
	_ = pipe.Write(text)
	_ = pipe.Flush()
	return b.String()
}

// firstAt is where key first appears in text: a link's key is a part of
// its text.
func firstAt(text, key string) int {
	if at := strings.Index(text, key); at >= 0 {
		return at
	}
	return len(text)
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
