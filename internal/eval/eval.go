// Package eval measures retrieval quality on a corpus and a question set
// (the JSONL format of test/eval/README.md), for ablations of chunking and
// search run with the same embedder: fixed-size chunks with dense search
// as the baseline, heading-tree chunks with dense and hybrid search, and
// the route's whole search body with each of its rules switched on in
// turn. Results of another system (`make compare`) are scored by the same
// scorer. It imports nothing from Kubernetes.
package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
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
	seen := map[string]bool{}
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
		if q.ID == "" || q.Question == "" || (q.GoldFile != nil && len(q.GoldHeading) == 0) {
			return nil, fmt.Errorf("%s:%d: a question needs an id, text, and a gold heading path with its gold file", path, line)
		}
		if seen[q.ID] {
			return nil, fmt.Errorf("%s:%d: question id %s repeats", path, line, q.ID)
		}
		seen[q.ID] = true
		out = append(out, q)
	}
	return out, scanner.Err()
}
