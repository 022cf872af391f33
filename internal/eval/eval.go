// Package eval is what ragroute's evaluations share, so that a figure
// means the same wherever it was measured: the question sets (the JSONL
// formats of test/eval/README.md, single- and multi-part: eval.go,
// multipart.go), the corpus as ingestion names it (corpus.go), the gold
// sections a result is judged against (gold.go), and the scorers — a
// search's ranking by recall@k, MRR, nDCG@10 and recall within a token
// budget (score.go); a whole turn, read from its events, for grounding,
// citations, invented links, honest not-found and latency (turns.go,
// fragments.go), and a mode's figures over its turns (figures.go) — with
// the tables that print them (tables.go).
//
// Two packages score with it: eval/live, the live scorer every
// RouteEvaluation Job runs (`ragroute eval-route`), and eval/lab, the
// research tooling behind `make eval`, `make eval-answers` and `make
// eval-agentic`. It imports neither, and nothing from Kubernetes.
package eval

import (
	"fmt"
)

// Question is one line of the question set.
type Question struct {
	ID          string   `json:"id"`
	Question    string   `json:"question"`
	GoldFile    *string  `json:"gold_file"`
	GoldHeading []string `json:"gold_heading_path"`
	Intent      string   `json:"intent"`
	Difficulty  string   `json:"difficulty"`
}

// Answerable reports whether the question has a gold section.
func (q Question) Answerable() bool { return q.GoldFile != nil }

// LoadQuestions reads a JSONL question set: one file, or several
// (dev.jsonl and dev-unanswerable.jsonl) read in order; an id twice is
// an error.
func LoadQuestions(paths ...string) ([]Question, error) {
	var out []Question
	seen := map[string]string{}
	for _, path := range paths {
		err := readQuestionLines(path, func(q Question) (string, string) { return q.ID, q.Question }, func(_ int, q Question) error {
			if q.GoldFile != nil && len(q.GoldHeading) == 0 {
				return fmt.Errorf("question %s has a gold file but no gold heading path", q.ID)
			}
			if first, ok := seen[q.ID]; ok {
				return fmt.Errorf("question %s is in %s and in %s", q.ID, first, path)
			}
			seen[q.ID] = path
			out = append(out, q)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
