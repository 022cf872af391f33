// Package eval measures ragroute on a corpus and a question set (the
// JSONL format of test/eval/README.md), with the same embedder throughout.
//
// Retrieval (`make eval`, run.go): ablations of chunking and search —
// fixed-size chunks with dense search as the baseline, heading-tree chunks
// with dense and hybrid search, and the route's whole search body with
// each of its rules switched on in turn — scored by recall@k, MRR, nDCG@10
// and recall within a token budget (score.go, against the gold sections
// of gold.go); the curves of the not-found signals (floors.go), a sweep of
// the fusion weights and the dominance (weights.go), the route body with a
// cross-encoder rescoring its top 10/20/30 (rerank.go), every choice also
// made by 2-fold cross-validation and scored held out (crossval.go), the
// misses explained (misses.go), and another system's results (`make
// compare`, peer.go) by the same scorer.
// Vectors are cached between runs (vectorcache.go).
//
// Answers (`make eval-answers`, answers*.go): each question runs as a
// whole turn through the route's own Runner with a real chat model, once
// per answer mode; the turns' events are scored for grounding, citations,
// invented links, honest not-found and latency, and the grounding
// threshold's curve is measured on sentences cut as the route's check cuts
// them (route/answer).
//
// A deployed route (`ragroute eval-route`, live*.go): the questions asked
// over HTTP as an identity the route trusts — its /v1/search, its turns,
// or both — and what it answered scored by the same scorers, with a
// summary an operator reads back and per-question results cut to fit a
// ConfigMap.
//
// It imports nothing from Kubernetes.
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

// LoadQuestions reads a JSONL question set.
func LoadQuestions(path string) ([]Question, error) {
	var out []Question
	err := readQuestionLines(path, func(q Question) (string, string) { return q.ID, q.Question }, func(_ int, q Question) error {
		if q.GoldFile != nil && len(q.GoldHeading) == 0 {
			return fmt.Errorf("question %s has a gold file but no gold heading path", q.ID)
		}
		out = append(out, q)
		return nil
	})
	return out, err
}
