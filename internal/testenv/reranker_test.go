package testenv

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// The stand-in reranker answers in the /rerank shape the route's
// cross-encoder client reads: a document holding most of the question's
// words near 1, one holding few near 0, every index once.
func TestRerankScoresByTheQuestionsWords(t *testing.T) {
	m := StartModelServer(8)
	defer m.Close()
	body, _ := json.Marshal(map[string]any{"model": "m", "query": "Where do I click to roll back a release?", "top_n": 3,
		"documents": []string{"Deploy console\n\nTo roll back a release, click History.", "Expenses\n\nClaims need a receipt.", "Release notes: click here."}})
	resp, err := http.Post(m.URL+"/rerank", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	score := map[int]float64{}
	for _, r := range out.Results {
		score[r.Index] = r.Score
	}
	if len(score) != 3 || score[0] < 0.9 || score[1] > 0.05 || !(score[1] < score[2] && score[2] < score[0]) {
		t.Errorf("scores %v: want the runbook near 1, the expenses page near 0, the notes between", score)
	}
}
