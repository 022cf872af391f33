package eval

import (
	"math"
	"slices"
	"time"

	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// TopK is how deep rankings are scored.
const TopK = 10

// contextBudgets are the packed-context sizes, in WordPiece tokens, at
// which recall is also measured: systems whose chunks differ in size are
// compared at equal context.
var contextBudgets = []int{1000, 2000, 4000}

// Metrics are one configuration's scores.
type Metrics struct {
	Recall1        float64 `json:"recall@1"`
	Recall5        float64 `json:"recall@5"`
	Recall10       float64 `json:"recall@10"`
	MRR            float64 `json:"mrr"`
	NDCG10         float64 `json:"ndcg@10"`
	IntentAccuracy float64 `json:"intent_accuracy"`
	NotFoundRate   float64 `json:"notfound_rate"`
	// FileRecall5: the gold file among the first 5 results.
	FileRecall5 float64 `json:"file_recall@5"`
	// RecallAtTokens: the gold section among the whole results that fit
	// in the first N tokens of context, per budget.
	RecallAtTokens map[int]float64 `json:"recall_at_tokens"`
	// P50Millis is the median time of one search, embedding included;
	// 0 where the configuration was not timed on its own (the route's
	// ablations fuse shared rankings).
	P50Millis float64 `json:"p50_ms,omitempty"`
	// RerankP50Millis and RerankP95Millis: the cross-encoder's added time
	// per search, in the cross-encoder rows.
	RerankP50Millis float64 `json:"rerank_p50_ms,omitempty"`
	RerankP95Millis float64 `json:"rerank_p95_ms,omitempty"`
}

// Outcome is what one search (a configuration's, or a live route's
// /v1/search) returned for one question.
type Outcome struct {
	Units []Unit
	// NotFound: the search body returned nothing, so the route answers
	// the not-found wording without asking the model.
	NotFound   bool
	Confidence retrieval.Confidence
	// Elapsed is the search's time; 0 where it says nothing.
	Elapsed time.Duration
	// Rerank is the cross-encoder's time, and Relevance the best
	// candidate's relevance, in the cross-encoder rows.
	Rerank    time.Duration
	Relevance float64
}

// FirstHit is the 1-based rank of the first unit holding the gold section
// in the top 10, or 0.
func (g Gold) FirstHit(units []Unit, q Question) int {
	for i, u := range units[:min(len(units), TopK)] {
		if g.Hit(u, q) {
			return i + 1
		}
	}
	return 0
}

// contextToHit is how many tokens of packed results it takes to hold the
// gold section: the whole results up to and including the first that
// holds it; ok is false when none does.
func (g Gold) contextToHit(units []Unit, q Question, tokens tokenize.Counter) (used int, ok bool) {
	for _, u := range units {
		used += tokens.Count(u.Text)
		if g.Hit(u, q) {
			return used, true
		}
	}
	return 0, false
}

// Score computes a configuration's metrics over its outcomes, one per
// question in order.
func (g Gold) Score(questions []Question, outcomes []Outcome, tokens tokenize.Counter, intentOK func(Question) bool) Metrics {
	m := Metrics{RecallAtTokens: map[int]float64{}}
	var answerable, unanswerable, intents float64
	var times []time.Duration
	for i, q := range questions {
		o := outcomes[i]
		times = append(times, o.Elapsed)
		if !q.Answerable() {
			unanswerable++
			if o.NotFound {
				m.NotFoundRate++
			}
			continue
		}
		answerable++
		if intentOK(q) {
			intents++
		}
		if r := g.FirstHit(o.Units, q); r > 0 {
			m.Recall1 += b2f(r <= 1)
			m.Recall5 += b2f(r <= 5)
			m.Recall10++
			m.MRR += 1 / float64(r)
			m.NDCG10 += 1 / math.Log2(float64(r)+1)
		}
		for _, u := range o.Units[:min(len(o.Units), 5)] {
			if g.fileHit(u, q) {
				m.FileRecall5++
				break
			}
		}
		used, held := g.contextToHit(o.Units, q, tokens)
		for _, b := range contextBudgets {
			m.RecallAtTokens[b] += b2f(held && used <= b)
		}
	}
	if answerable > 0 {
		for _, v := range []*float64{&m.Recall1, &m.Recall5, &m.Recall10, &m.MRR, &m.NDCG10, &m.FileRecall5} {
			*v /= answerable
		}
		for b := range m.RecallAtTokens {
			m.RecallAtTokens[b] /= answerable
		}
		m.IntentAccuracy = intents / answerable
	}
	if unanswerable > 0 {
		m.NotFoundRate /= unanswerable
	}
	if times[0] > 0 {
		m.P50Millis = median(times)
	}
	return m
}

func median(times []time.Duration) float64 {
	if len(times) == 0 {
		return 0
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	return float64(sorted[len(sorted)/2].Microseconds()) / 1000
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// IntentMatches reports whether the route's intent classifier agrees with
// the question set's intent.
func IntentMatches(q Question) bool {
	return string(retrieval.ClassifyIntent(q.Question)) == q.Intent
}
