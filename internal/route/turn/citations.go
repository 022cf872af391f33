package turn

import (
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// What the turn reports of the fragments an answer rests on, and the
// clients that check it, shared by the generated answer (respond.go)
// and the extractive one (extract.go).

// checker is the grounding check's clients: Answer.Check's, or the
// searcher's embedder, uncached, for what Check leaves unset.
func (e *Engine) checker() answer.Checker {
	c := e.Answer.Check
	if c.Units == nil {
		c.Units = e.Searcher.Embedder
	}
	if c.Sentences == nil {
		c.Sentences = e.Searcher.Embedder
	}
	return c
}

// emitCitations reports the fragments an answer cites; inferred: the
// route found them for sentences the model left unmarked.
func (t *turn) emitCitations(cited []retrieval.Fragment, inferred bool) {
	for _, f := range cited {
		t.emit(Citation{Marker: f.Marker, Title: f.Title, SourceURI: f.SourceURI, Heading: f.HeadingPath, Inferred: inferred})
	}
}
