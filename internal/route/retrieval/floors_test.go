package retrieval

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// bandEmbedder is a deterministic embedder whose cosines live in a band:
// every vector shares a common direction of weight common, and the rest is
// a bag of content words (function words carry no meaning, as in a
// sentence embedder), one dimension per word, so cos(a, b) = common +
// (1 − common) × word overlap. common 0.1 scores unrelated texts near 0.1,
// as all-MiniLM-L6-v2 does; common 0.8 near 0.8, as multilingual-e5-small
// does.
type bandEmbedder struct {
	common float64
	vocab  map[string]int // word → its dimension, shared by every text
}

func newBandEmbedder(common float64) bandEmbedder {
	return bandEmbedder{common: common, vocab: map[string]int{}}
}

const bandDim = 1024

var functionWords = map[string]bool{"a": true, "an": true, "and": true, "are": true, "as": true, "be": true,
	"before": true, "by": true, "for": true, "how": true, "is": true, "its": true, "it": true, "may": true,
	"of": true, "on": true, "one": true, "or": true, "such": true, "that": true, "the": true, "to": true,
	"what": true, "when": true, "which": true, "who": true, "with": true, "do": true}

func (e bandEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		counts := make([]float64, bandDim)
		var norm float64
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if functionWords[w] {
				continue
			}
			d, ok := e.vocab[w]
			if !ok {
				d = len(e.vocab) + 1
				e.vocab[w] = d
			}
			counts[d]++
		}
		for _, c := range counts {
			norm += c * c
		}
		v := make([]float32, bandDim)
		v[0] = float32(math.Sqrt(e.common))
		for d, c := range counts {
			if c > 0 {
				v[d] = float32(math.Sqrt(1-e.common) * c / math.Sqrt(norm))
			}
		}
		out[i] = v
	}
	return out, nil
}

// vectorIndex scores every chunk by its cosine to the query vector (text
// or title, whichever is closer, as the store does) and returns them most
// similar first.
type vectorIndex struct {
	rows []knowledge.Row
}

func (x *vectorIndex) HybridSearch(_ context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error) {
	q := unitOf(req.Vector)
	hits := make([]knowledge.Hit, len(x.rows))
	for i, r := range x.rows {
		sim := max(dotOf(q, unitOf(r.TextVector)), dotOf(q, unitOf(r.TitleVector)))
		hits[i] = knowledge.Hit{Row: r, Similarity: float32(sim)}
	}
	slices.SortStableFunc(hits, func(a, b knowledge.Hit) int {
		switch {
		case a.Similarity > b.Similarity:
			return -1
		case a.Similarity < b.Similarity:
			return 1
		}
		return 0
	})
	return hits[:min(len(hits), req.Candidates)], nil
}

func (x *vectorIndex) Parts(context.Context, []string, []string) (map[string][]knowledge.Row, error) {
	return map[string][]knowledge.Row{}, nil
}

func (x *vectorIndex) Current(_ context.Context, ids, parents, principals []string) ([]knowledge.RowVersion, error) {
	return currentOf(x.rows, ids, parents, principals), nil
}

func unitOf(v []float32) []float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) / math.Sqrt(n)
	}
	return out
}

func dotOf(a, b []float64) float64 {
	var d float64
	for i := range a {
		d += a[i] * b[i]
	}
	return d
}

// floorCorpus is a handful of documents on unrelated subjects, in the
// same house style (shared function words), one or two chunks each.
var floorCorpus = []struct{ doc, title, heading, text string }{
	{"sync", "Sync", "Sync waves", "Sync waves order the apply of resources: hooks and manifests of a lower wave are applied and healthy before the next wave starts."},
	{"sync", "Sync", "Sync options", "Sync options such as prune, replace and server side apply change how the controller applies the manifests of an application."},
	{"rbac", "RBAC", "Roles", "Roles grant the users and groups of a project the right to get, create, update or delete its applications and repositories."},
	{"rbac", "RBAC", "Policies", "A policy line names a subject, a resource, an action and an object pattern; the default role applies to everyone else."},
	{"sso", "Single sign-on", "Dex", "Dex connects the login page to an identity provider such as GitHub, LDAP or SAML and maps its groups to claims."},
	{"notify", "Notifications", "Triggers", "Triggers decide when a notification is sent: on a degraded health status, a failed sync, or a new deployment."},
	{"notify", "Notifications", "Templates", "Templates format the message of a notification for Slack, email or a webhook with the fields of the application."},
	{"cli", "Command line", "Login", "The command line client logs in with a username and password or a token, and stores the session in its config file."},
	{"backup", "Backup", "Export", "Export writes every application, project and setting to one YAML file that import restores on a new installation."},
	{"metrics", "Metrics", "Prometheus", "The controller exposes Prometheus metrics of reconciliation time, queue depth and the health of every application."},
}

// floorWorld embeds the corpus with e and measures its background as an
// ingestion does: chunk titles embedded as questions against the chunks
// of other documents.
func floorWorld(t *testing.T, e bandEmbedder) (*vectorIndex, knowledge.Background) {
	t.Helper()
	ctx := context.Background()
	index := &vectorIndex{}
	var queries []knowledge.BackgroundQuery
	var chunks []knowledge.BackgroundChunk
	for i, c := range floorCorpus {
		row := knowledge.Row{ID: c.doc + string(rune('a'+i)), DocID: c.doc, Source: c.doc + ".md", Title: c.title,
			HeadingPath: []string{c.heading}, Text: c.text, Kind: "prose", PartCount: 1}
		vectors, err := e.Embed(ctx, []string{row.Text, row.TitlePath()})
		if err != nil {
			t.Fatal(err)
		}
		row.TextVector, row.TitleVector = vectors[0], vectors[1]
		index.rows = append(index.rows, row)
		chunks = append(chunks, knowledge.BackgroundChunk{DocID: c.doc, Text: vectors[0], Title: vectors[1]})
		queries = append(queries, knowledge.BackgroundQuery{DocID: c.doc, Vector: vectors[1]})
	}
	return index, knowledge.BackgroundOf(queries, chunks)
}

// The questions: each related one is answered by one document; the
// unrelated ones by none, though each shares a word with some chunk, as
// unrelated questions to a real corpus do.
var (
	relatedQuestions = map[string]string{
		"How do sync waves order the apply of hooks?":              "sync",
		"Which roles may delete the applications of a project?":    "rbac",
		"When is a notification sent for a failed sync or health?": "notify",
	}
	unrelatedQuestions = []string{
		"What is a good recipe for rye sourdough bread from the controller's kitchen?",
		"Who won the football cup final of the project teams last year?",
		"Which file format stores a knitting pattern for a winter scarf?",
	}
)

// floorsWork reports whether searches under floors keep the answering
// document for each related question and find nothing for the unrelated
// ones (the not-found answer).
func floorsWork(t *testing.T, e bandEmbedder, index *vectorIndex, floors func() (float64, float64)) bool {
	t.Helper()
	gen := int64(1)
	s := &Searcher{Index: index, Embedder: e, Reranker: KeepOrder{}, Cache: NewMemoryCache(100, time.Minute, time.Now),
		Settings: SearchSettings{Candidates: 20, RRFK: 60, MaxFragments: 10}, Generation: func() int64 { return gen }, Floors: floors}
	docsFound := func(q string) []string {
		r, err := s.Search(context.Background(), q, []string{"public"})
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		for _, f := range r.Fragments {
			docs = append(docs, f.DocID)
		}
		slices.Sort(docs)
		return slices.Compact(docs)
	}
	for q, doc := range relatedQuestions {
		if got := docsFound(q); !slices.Contains(got, doc) {
			return false
		}
	}
	for _, q := range unrelatedQuestions {
		if got := docsFound(q); len(got) > 0 {
			return false
		}
	}
	return true
}

func TestRelativeFloorsMeanTheSameForEveryEmbedder(t *testing.T) {
	miniLM, e5 := newBandEmbedder(0.1), newBandEmbedder(0.8)
	similaritySigmas, strictSigmas := 3.0, 5.0
	for _, e := range []bandEmbedder{miniLM, e5} {
		index, background := floorWorld(t, e)
		t.Logf("common %.1f: background mean %.4f sd %.4f p99 %.4f (%d pairs): floors %.4f / %.4f",
			e.common, background.Mean, background.StdDev, background.P99, background.Samples,
			background.Floor(similaritySigmas), background.Floor(strictSigmas))
		floors := &RelativeFloors{Similarity: 0.2, Strict: 0.35, SimilaritySigmas: &similaritySigmas, StrictSigmas: &strictSigmas,
			Serving: func() (knowledge.Generation, bool) {
				return knowledge.Generation{Number: 1, Background: &background}, true
			}, Logger: slog.New(slog.DiscardHandler)}
		if !floorsWork(t, e, index, floors.Floors) {
			t.Errorf("common %.1f: relative floors (%.0fσ, %.0fσ) did not keep the related and drop the unrelated", e.common, similaritySigmas, strictSigmas)
		}
	}

	// No raw floor does both: one that drops what is unrelated to the e5-like
	// embedder drops what is related to the MiniLM-like one.
	miniIndex, _ := floorWorld(t, miniLM)
	e5Index, _ := floorWorld(t, e5)
	var worksMini, worksE5 []float64
	for f := 0.0; f <= 1.0; f += 0.01 {
		raw := func() (float64, float64) { return f, f }
		if floorsWork(t, miniLM, miniIndex, raw) {
			worksMini = append(worksMini, f)
		}
		if floorsWork(t, e5, e5Index, raw) {
			worksE5 = append(worksE5, f)
		}
	}
	if len(worksMini) == 0 || len(worksE5) == 0 {
		t.Fatalf("the fixture is too hard: raw floors that work for MiniLM-like %v, for e5-like %v", worksMini, worksE5)
	}
	for _, f := range worksMini {
		if slices.Contains(worksE5, f) {
			t.Errorf("raw floor %.2f works for both embedders: the fixture does not show the problem", f)
		}
	}
	t.Logf("raw floors that work: MiniLM-like %.2f–%.2f, e5-like %.2f–%.2f",
		worksMini[0], worksMini[len(worksMini)-1], worksE5[0], worksE5[len(worksE5)-1])
}

func TestRelativeFloorsFallBackAndWarnOncePerGeneration(t *testing.T) {
	var logs bytes.Buffer
	three := 3.0
	gen := knowledge.Generation{Number: 4, Collection: "docs_g4"}
	reads := 0
	f := &RelativeFloors{Similarity: 0.2, Strict: 0.35, SimilaritySigmas: &three,
		Serving: func() (knowledge.Generation, bool) { reads++; return gen, reads > 1 },
		Logger:  slog.New(slog.NewTextHandler(&logs, nil))}

	// Not read yet: the raw floors, nothing to warn about.
	if s, st := f.Floors(); s != 0.2 || st != 0.35 || logs.Len() != 0 {
		t.Fatalf("before the first read: %v %v, logs %q", s, st, logs.String())
	}
	// Generation 4 has no background: the raw floors, one warning.
	for range 3 {
		if s, st := f.Floors(); s != 0.2 || st != 0.35 {
			t.Fatalf("without a background: %v %v, want the raw floors", s, st)
		}
	}
	if n := strings.Count(logs.String(), "no background similarity recorded"); n != 1 || !strings.Contains(logs.String(), "generation=4") {
		t.Fatalf("want one warning naming generation 4, got %d:\n%s", n, logs.String())
	}

	// An ingestion records one on the same generation: relative from now on.
	gen.Background = &knowledge.Background{Mean: 0.8, StdDev: 0.03, Samples: 1000}
	if s, st := f.Floors(); math.Abs(s-0.89) > 1e-9 || st != 0.35 {
		t.Errorf("with a background: %v %v, want 0.89 (0.8 + 3 × 0.03) and the raw strict floor", s, st)
	}
	// A new generation without one warns again, once.
	gen = knowledge.Generation{Number: 5, Collection: "docs_g5"}
	f.Floors()
	f.Floors()
	if n := strings.Count(logs.String(), "no background similarity recorded"); n != 2 {
		t.Errorf("want a second warning for generation 5, got %d:\n%s", n, logs.String())
	}
}
