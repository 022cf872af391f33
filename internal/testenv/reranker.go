package testenv

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// rerank answers POST /rerank in the common shape (Cohere, Jina, vLLM,
// TEI) as a lexical stand-in for a cross-encoder: a document's relevance
// is the share of the query's content words it holds, through a logistic
// centered on one half, so a document holding few of them scores near 0
// and one holding most near 1, as a cross-encoder's probabilities do.
// Words are all it reads: a document that shares the words of a question
// it does not answer scores as if it did.
func (m *ModelServer) rerank(w http.ResponseWriter, r *http.Request) {
	m.Requests.Add(1)
	var req struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		TopN      int      `json:"top_n"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	query := contentWords(req.Query)
	results := make([]result, len(req.Documents))
	for i, doc := range req.Documents {
		results[i] = result{Index: i, Score: lexicalRelevance(query, contentWords(doc))}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
}

// lexicalRelevance is the stand-in reranker's score of a document's words
// for a query's: the logistic of the share of the query's words it holds.
func lexicalRelevance(query, doc map[string]bool) float64 {
	if len(query) == 0 {
		return 0
	}
	held := 0
	for w := range query {
		if doc[w] {
			held++
		}
	}
	share := float64(held) / float64(len(query))
	return 1 / (1 + math.Exp(-12*(share-0.5)))
}

// contentWords are a text's lower-cased words of four letters or more but
// the question words, cut to their first six letters: enough to skip the
// small words every question has and to match a word's forms.
func contentWords(text string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if r := []rune(w); len(r) >= 4 && !questionWords[w] {
			words[string(r[:min(len(r), 6)])] = true
		}
	}
	return words
}

// questionWords say that something is asked, not what.
var questionWords = map[string]bool{"what": true, "when": true, "where": true, "which": true, "does": true, "have": true,
	"with": true, "that": true, "this": true, "from": true, "your": true, "want": true, "need": true, "should": true}
