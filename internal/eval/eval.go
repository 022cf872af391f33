// Package eval measures retrieval quality on a corpus and a question set
// (the JSONL format of test/eval/README.md), for ablations of chunking and
// search run with the same embedder: fixed-size chunks with dense search
// as the baseline, heading-tree chunks with dense search, heading-tree
// chunks with the four-primitive hybrid search, and the route's whole
// search body (one fragment per document, reassembly). It imports nothing
// from Kubernetes.
package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
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
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	defer f.Close()
	var out []Question
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var q Question
		if err := json.Unmarshal([]byte(text), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if q.Question == "" || (q.GoldFile != nil && len(q.GoldHeading) == 0) {
			return nil, fmt.Errorf("%s:%d: a question needs text, and a gold heading path with its gold file", path, line)
		}
		out = append(out, q)
	}
	return out, scanner.Err()
}

// hit reports whether a retrieved unit (its file and the heading paths it
// covers) holds the gold section, leniently: one path is a prefix of the
// other (an ancestor section that contains the gold, or a subsection of
// it). Text under no heading holds no gold section.
func hit(file string, paths [][]string, q Question) bool {
	if q.GoldFile == nil || file != *q.GoldFile {
		return false
	}
	for _, p := range paths {
		n := min(len(p), len(q.GoldHeading))
		if n > 0 && slices.Equal(p[:n], q.GoldHeading[:n]) {
			return true
		}
	}
	return false
}

// Metrics are one configuration's scores.
type Metrics struct {
	Recall1        float64 `json:"recall@1"`
	Recall5        float64 `json:"recall@5"`
	Recall10       float64 `json:"recall@10"`
	MRR            float64 `json:"mrr"`
	NDCG10         float64 `json:"ndcg@10"`
	IntentAccuracy float64 `json:"intent_accuracy"`
	NotFoundRate   float64 `json:"notfound_rate"`
}

// scorer accumulates ranks of the first hit (0 = none in the top 10).
type scorer struct {
	ranks             []int
	unanswerable      int
	abstained         int
	intents, intentOK int
}

func (s *scorer) rank(r int) { s.ranks = append(s.ranks, r) }

func (s *scorer) metrics() Metrics {
	var m Metrics
	n := float64(len(s.ranks))
	for _, r := range s.ranks {
		if r == 0 {
			continue
		}
		if r <= 1 {
			m.Recall1++
		}
		if r <= 5 {
			m.Recall5++
		}
		if r <= 10 {
			m.Recall10++
			m.MRR += 1 / float64(r)
			m.NDCG10 += 1 / math.Log2(float64(r)+1)
		}
	}
	if n > 0 {
		m.Recall1, m.Recall5, m.Recall10, m.MRR, m.NDCG10 = m.Recall1/n, m.Recall5/n, m.Recall10/n, m.MRR/n, m.NDCG10/n
	}
	if s.intents > 0 {
		m.IntentAccuracy = float64(s.intentOK) / float64(s.intents)
	}
	if s.unanswerable > 0 {
		m.NotFoundRate = float64(s.abstained) / float64(s.unanswerable)
	}
	return m
}
