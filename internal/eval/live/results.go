package live

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/eval"
)

// Result is one question of a live evaluation (--results).
type Result struct {
	ID         string `json:"id"`
	Question   string `json:"question"`
	Answerable bool   `json:"answerable"`
	// Miss: an answerable question without its gold section in the
	// search's top 5 (the lab's --explain rule) or not cited by its answer, an
	// unanswerable one answered, or a question that failed.
	Miss bool `json:"miss"`
	// HitRank is the gold section's rank in the search's top 10, 0 for
	// none; absent in scope answers.
	HitRank *int `json:"hitRank,omitempty"`
	// TopSources are the search's first 5 results (the turn's packed
	// fragments in scope answers), `source › heading › path`.
	TopSources []string `json:"topSources"`
	NotFound   bool     `json:"notFound"`
	// GroundedRatio and Cited are the answer's, in scopes with turns.
	GroundedRatio *float64 `json:"groundedRatio,omitempty"`
	Cited         []string `json:"cited,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// Results is the --results file: the results, misses first, and how
// many were cut to keep it under its byte cap.
type Results struct {
	Questions int      `json:"questions"`
	Cut       int      `json:"cut"`
	Results   []Result `json:"results"`
}

// liveResults are the per-question results, misses first, each group in
// question order.
func liveResults(opts Options, gold eval.Gold, got []liveQuestion) []Result {
	out := make([]Result, len(got))
	for i, g := range got {
		q := opts.Questions[i]
		r := Result{ID: q.ID, Question: q.Question, Answerable: q.Answerable(), TopSources: []string{}}
		if g.err != nil {
			r.Error, r.Miss = g.err.Error(), true
		}
		if opts.Scope != ScopeAnswers && g.err == nil {
			rank := gold.FirstHit(g.search.Units, q)
			r.HitRank, r.NotFound = &rank, g.search.NotFound
			r.Miss = r.Miss || (q.Answerable() && (rank == 0 || rank > 5)) || (!q.Answerable() && !g.search.NotFound)
			for _, u := range g.search.Units[:min(5, len(g.search.Units))] {
				r.TopSources = append(r.TopSources, unitName(u))
			}
		}
		if opts.Scope != ScopeRetrieval && g.err == nil {
			turnResult(&r, g.turn, gold)
		}
		out[i] = r
	}
	slices.SortStableFunc(out, func(a, b Result) int { return b2i(b.Miss) - b2i(a.Miss) })
	return out
}

// turnResult adds what the question's turn answered.
func turnResult(r *Result, o eval.TurnOutcome, gold eval.Gold) {
	c := o.Completed
	if c == nil {
		r.Error, r.Miss = "turn failed: "+o.Err, true
		return
	}
	r.NotFound, r.GroundedRatio = c.NotFound, c.GroundedRatio
	for _, m := range o.Cited {
		if u, ok := o.Units[m]; ok {
			r.Cited = append(r.Cited, unitName(u))
		}
	}
	_, hits := eval.CitedHits(o, gold)
	r.Miss = r.Miss || (o.Question.Answerable() && hits == 0) || (!o.Question.Answerable() && !c.NotFound)
	if r.HitRank == nil {
		for _, m := range sortedMarkers(o.Sources)[:min(5, len(o.Sources))] {
			u, ok := o.Units[m]
			if !ok {
				u = eval.Unit{Source: o.Sources[m].SourceURI, HeadingPath: o.Sources[m].HeadingPath}
			}
			r.TopSources = append(r.TopSources, unitName(u))
		}
	}
}

func sortedMarkers[T any](byMarker map[string]T) []string {
	markers := make([]string, 0, len(byMarker))
	for m := range byMarker {
		markers = append(markers, m)
	}
	slices.SortFunc(markers, func(a, b string) int { return eval.MarkerNumber(a) - eval.MarkerNumber(b) })
	return markers
}

func unitName(u eval.Unit) string {
	return strings.Join(append([]string{u.Source}, u.HeadingPath...), " › ")
}

// EncodeResults is the results as JSON of at most maxBytes: those that do
// not fit are cut from the end (the misses come first) and counted.
func EncodeResults(results []Result, maxBytes int) ([]byte, error) {
	// The envelope is measured with the largest count it may carry.
	envelope, err := json.Marshal(Results{Questions: len(results), Cut: len(results), Results: []Result{}})
	if err != nil {
		return nil, fmt.Errorf("encode the results: %w", err)
	}
	size, kept := len(envelope), 0
	for _, r := range results {
		entry, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode result %s: %w", r.ID, err)
		}
		if size+len(entry)+1 > maxBytes { // +1: the comma
			break
		}
		size += len(entry) + 1
		kept++
	}
	if size > maxBytes {
		return nil, fmt.Errorf("the results need %d bytes even without a question: more than the cap of %d", size, maxBytes)
	}
	data, err := json.Marshal(Results{Questions: len(results), Cut: len(results) - kept, Results: results[:kept]})
	if err != nil {
		return nil, fmt.Errorf("encode the results: %w", err)
	}
	return data, nil
}
