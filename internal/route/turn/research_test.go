package turn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// researchScript searches with query, rephrases as rephrased when asked
// (a call without tools under the rephrase prompt), and answers with
// answer.
func researchScript(query, rephrased, answer string) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		switch {
		case len(c.Tools) > 0:
			return searchCall(query)
		case strings.Contains(c.Messages[0].Content, "found nothing"):
			return model.Reply{Content: rephrased}
		}
		return model.Reply{Content: answer}
	}
}

func TestResearchRephrasesOnceThenSaysNotFound(t *testing.T) {
	w := newFastWorld(t, researchScript("quota limits kubernetes", "kubernetes quota", "never"))
	w.runner.Search.Research = true
	events := w.run(staff, routetest.User("How do I set quotas?"))

	if got := w.index.searches(); len(got) != 2 || got[1] != "kubernetes quota" {
		t.Fatalf("searches %q: want the question's and the one rephrase", got)
	}
	research := routetest.OfType(events, turn.EventResearch)
	if len(research) != 1 {
		t.Fatalf("research events %+v", research)
	}
	if r := research[0].Data.(turn.Research); r.Queries[0] != "quota limits kubernetes" || r.Rephrase != "kubernetes quota" || r.Found != 0 {
		t.Errorf("research %+v", r)
	}
	if !completed(t, events).NotFound || routetest.AnswerOf(events) != routetest.Prompt().NotFound {
		t.Errorf("answer %q", routetest.AnswerOf(events))
	}
	if n := len(w.chat.seen()); n != 2 {
		t.Errorf("%d model calls, want the decision and the rephrase only", n)
	}
}

func TestResearchThatFindsIsAnswered(t *testing.T) {
	w := newFastWorld(t, researchScript("quota limits kubernetes", "sync waves order", "Lower waves first [S1]."))
	w.runner.Search.Research = true
	events := w.run(staff, routetest.User("In which order are waves synced?"))

	if completed(t, events).NotFound || routetest.AnswerOf(events) != "Lower waves first [S1]." {
		t.Fatalf("answer %q", routetest.AnswerOf(events))
	}
	calls := w.chat.seen()
	answer := calls[len(calls)-1]
	var results []string
	for _, m := range answer.Messages {
		if m.Role == model.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(results[1], "Sync Waves") {
		t.Errorf("the answer's tool results %q: want the first search's and the re-search's", results)
	}
	if cites := routetest.OfType(events, turn.EventCitation); len(cites) != 1 {
		t.Errorf("citations %+v", cites)
	}
}

func TestResearchOffSearchesOnce(t *testing.T) {
	w := newFastWorld(t, researchScript("quota limits kubernetes", "sync waves", "never"))
	events := w.run(staff, routetest.User("How do I set quotas?"))
	if n := len(w.index.searches()); n != 1 || len(routetest.OfType(events, turn.EventResearch)) != 0 {
		t.Errorf("%d searches with re-search off", n)
	}
}

func TestResearchBelowRetriesAWeakBestFragment(t *testing.T) {
	w := newFastWorld(t, researchScript("sync", "sync waves order", "Lower waves first [S1]."))
	w.runner.Search.Research = true
	below := 0.99
	w.runner.Search.ResearchBelow = &below
	events := w.run(staff, routetest.User("In which order are waves synced?"))
	if n := len(w.index.searches()); n != 2 || len(routetest.OfType(events, turn.EventResearch)) != 1 {
		t.Errorf("%d searches: a best fragment below researchBelow is re-searched once", n)
	}
	w = newFastWorld(t, researchScript("sync", "sync waves order", "Lower waves first [S1]."))
	w.runner.Search.Research = true
	w.run(staff, routetest.User("In which order are waves synced?"))
	if n := len(w.index.searches()); n != 1 {
		t.Errorf("%d searches without researchBelow: found is found", n)
	}
}

// A route without a model has nothing to rephrase with: the question it
// searched as asked is not searched again, and no research is reported.
func TestResearchWithoutAModelSearchesOnce(t *testing.T) {
	w := newFastWorld(t, nil)
	w.runner.Chat, w.runner.Search.Research = nil, true
	w.runner.Search.Policy, w.runner.Answer.Mode = podconfig.SearchAlways, podconfig.AnswerExtractive
	events := w.run(staff, routetest.User("Zorblax quuxification?"))

	if !completed(t, events).NotFound {
		t.Fatalf("answer %q: want not found", routetest.AnswerOf(events))
	}
	if n, r := len(routetest.OfType(events, turn.EventRetrieval)), routetest.OfType(events, turn.EventResearch); n != 1 || len(r) != 0 {
		t.Errorf("%d searches, research %+v: want the question's search only", n, r)
	}
}

// A rephrase that repeats the query the round searched would find the
// same: the model's call is reported, the search is not run again.
func TestResearchRepeatingTheQueryIsNotSearchedAgain(t *testing.T) {
	w := newFastWorld(t, researchScript("quota limits kubernetes", "Quota limits, Kubernetes", "never"))
	w.runner.Search.Research = true
	events := w.run(staff, routetest.User("How do I set quotas?"))

	if n := len(routetest.OfType(events, turn.EventRetrieval)); n != 1 {
		t.Errorf("%d searches: a rephrase repeating the round's query was searched again", n)
	}
	research := routetest.OfType(events, turn.EventResearch)
	if len(research) != 1 || research[0].Data.(turn.Research).Rephrase != "Quota limits, Kubernetes" {
		t.Errorf("research %+v: want the rephrase reported", research)
	}
	if !completed(t, events).NotFound || len(w.chat.seen()) != 2 {
		t.Errorf("not found %v after %d model calls: want not found after the decision and the rephrase", completed(t, events).NotFound, len(w.chat.seen()))
	}
}

// relevanceOf is a cross-encoder in process that finds every fragment
// equally relevant: its relevance becomes each fragment's score.
type relevanceOf float64

func (r relevanceOf) Rerank(_ context.Context, _ string, fragments []retrieval.Fragment) ([]retrieval.Fragment, error) {
	out := append([]retrieval.Fragment(nil), fragments...)
	for i := range out {
		out[i].Score = float64(r)
	}
	return out, nil
}

// researchBelow is documented as a cosine: under a cross-encoder it is
// compared with the best fragment's similarity to the question, never
// with the relevance that ranked it.
func TestResearchBelowIsACosineUnderACrossEncoder(t *testing.T) {
	searches := func(relevance, below float64) int {
		w := newFastWorld(t, researchScript("sync", "sync waves order", "Lower waves first [S1]."))
		w.runner.Search.Research, w.runner.Search.ResearchBelow = true, &below
		w.runner.Searcher.Reranker = relevanceOf(relevance)
		w.runner.Searcher.Settings.StrictFloor = 0
		events := w.run(staff, routetest.User("In which order are waves synced?"))
		// The retrieval event shows both scales, so researchBelow and
		// diversity.margin can be tuned under a cross-encoder too.
		for _, e := range routetest.OfType(events, turn.EventRetrieval) {
			for _, src := range e.Data.(turn.RetrievalReport).Sources {
				if src.Score != relevance || src.Similarity < 0.05 || src.Similarity >= 1 {
					t.Errorf("source %q: score %g, similarity %g: want the relevance and the cosine", src.Title, src.Score, src.Similarity)
				}
			}
		}
		return len(w.index.searches())
	}
	// Every fragment passed the 0.05 similarity floor, so its cosine is
	// at least 0.05: nothing is weak at researchBelow 0.05, however low
	// the relevance.
	if n := searches(0.01, 0.05); n != 1 {
		t.Errorf("%d searches: a relevance of 0.01 was read as a cosine below researchBelow 0.05", n)
	}
	// No bag of shared words scores a cosine of 0.99, however relevant
	// the cross-encoder finds it.
	if n := searches(0.999, 0.99); n != 2 {
		t.Errorf("%d searches: a relevance of 0.999 hid a best cosine below researchBelow 0.99", n)
	}
}

// A model that writes a paragraph where one query was asked for is
// searched by its first line, cut at a word boundary.
func TestRephraseTakesOneBoundedLine(t *testing.T) {
	long := strings.Repeat("sync waves order ", 40)
	w := newFastWorld(t, researchScript("quota limits kubernetes", "\n  \""+long+"\"\nand then some advice", "Lower waves first [S1]."))
	w.runner.Search.Research = true
	w.run(staff, routetest.User("In which order are waves synced?"))
	got := w.index.searches()
	if len(got) != 2 || len(got[1]) > 300 || strings.Contains(got[1], "advice") || strings.ContainsAny(got[1], "\"\n") ||
		!strings.HasPrefix(got[1], "sync waves order") || strings.HasSuffix(got[1], " ") {
		t.Errorf("the re-search queried %q", got[len(got)-1])
	}
}

// A rephrased search the exact cache answers is a cache hit of the turn,
// as any other search of it is.
func TestResearchServedFromTheCacheIsTheTurnsCacheHit(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves order", "Lower waves first [S1]."))
	if completed(t, w.run(staff, routetest.User("In which order are waves synced?"))).CacheHit {
		t.Fatal("a first search is a cache hit")
	}
	// The next turn's own search finds nothing; its rephrase is the query
	// the cache holds from the first turn.
	w.chat.script = researchScript("quota limits kubernetes", "sync waves order", "Lower waves first [S1].")
	w.runner.Search.Research = true
	events := w.run(staff, routetest.User("In which order are waves synced?"))

	if got := w.index.searches(); len(got) != 2 || got[1] != "quota limits kubernetes" {
		t.Fatalf("index searches %q: want the first turn's and the second's own, the rephrase from the cache", got)
	}
	if r := routetest.OfType(events, turn.EventRetrieval); len(r) != 2 || !r[1].Data.(turn.RetrievalReport).CacheHit {
		t.Fatalf("retrievals %+v: want the re-search's from the cache", r)
	}
	if !completed(t, events).CacheHit {
		t.Error("turn.completed.cache_hit is false, though the re-search came from the cache")
	}
}

// The seed's rule holds for the answerability check too: a packing the
// check refuses is searched once more in other words before the turn
// says not found, and what the re-search packs is checked again.
func TestARefusedCheckSearchesOnceMoreBeforeNotFound(t *testing.T) {
	coverage := &turn.Answerability{Check: podconfig.AnswerabilityCoverage, MinCoverage: 0.75}
	w := newFastWorld(t, researchScript("waves healthy", "prune deletes resources git", "Pruning deletes them [S2]."))
	w.runner.Search.Research, w.runner.Answer.Answerability = true, coverage
	events := w.run(staff, routetest.User("Does pruning delete resources no longer in Git?"))

	if got := w.index.searches(); len(got) != 2 || got[1] != "prune deletes resources git" {
		t.Fatalf("searches %q: want the question's and the one rephrase", got)
	}
	reports := routetest.OfType(events, turn.EventAnswerability)
	if len(reports) != 2 || reports[0].Data.(turn.AnswerabilityReport).Answerable || !reports[1].Data.(turn.AnswerabilityReport).Answerable {
		t.Fatalf("answerability %+v: want the first packing refused, the re-search's let through", reports)
	}
	if completed(t, events).NotFound || routetest.AnswerOf(events) != "Pruning deletes them [S2]." {
		t.Errorf("answer %q", routetest.AnswerOf(events))
	}

	// Refused again after the re-search: not found, and no third search.
	w = newFastWorld(t, researchScript("waves healthy", "waves order", "never"))
	w.runner.Search.Research, w.runner.Answer.Answerability = true, coverage
	events = w.run(staff, routetest.User("Does pruning delete resources no longer in Git?"))
	if n := len(w.index.searches()); n != 2 || !completed(t, events).NotFound || routetest.AnswerOf(events) != routetest.Prompt().NotFound {
		t.Errorf("%d searches, answer %q: want two searches, then the not-found wording", n, routetest.AnswerOf(events))
	}
}
