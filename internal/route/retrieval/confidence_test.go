package retrieval

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
)

func TestDistinctiveTermsAreNamesNotWords(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		{"How do I configure Velero to back up Argo CD Applications on a schedule?", []string{"velero", "argo", "applications"}},
		{"How do I write an Argo Rollouts AnalysisTemplate that queries Prometheus?", []string{"argo", "rollouts", "analysistemplate", "prometheus"}},
		{"Why does argocd-repo-server ignore ghcr.io and REDIS_CREDS_DIR_PATH?", []string{"argocd-repo-server", "ghcr.io", "redis_creds_dir_path"}},
		{"Is the restartPolicy of Dex's pods Always?", []string{"restartpolicy", "dex"}},
		{"My flaky deployment keeps dragging the health down. Why?", nil},
		// Numbers and pairs of plain words are prose; versions, API groups
		// and paths stay names.
		{"Every commit regenerates all 200 apps within 1.5 minutes.", nil},
		{"Where is the health/sync badge, and can I enable/disable it?", nil},
		{"Does apps/v1 work with v2.0 and argoproj/argo-cd?", []string{"apps/v1", "v2.0", "argoproj/argo-cd"}},
		// In a Cyrillic question a Latin word names a tool or a kind; a
		// Russian word hyphenated to one inflects, so it is prose.
		{"Умеет ли kube-proxy балансировать HTTP-запросы по URL?", []string{"kube-proxy", "url"}},
		{"Под висит в ImagePullBackOff. Что это значит?", []string{"imagepullbackoff"}},
	}
	for _, tc := range cases {
		if got := DistinctiveTerms(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestConfidenceScoresTheBestCandidateOverTheBackground(t *testing.T) {
	hits := []knowledge.Hit{
		{Similarity: 0.62, Row: knowledge.Row{Text: "Back up with argocd admin export", HeadingPath: []string{"Disaster recovery"}},
			Ranks: map[knowledge.Primitive]int{knowledge.TextDense: 1}},
		{Similarity: 0.55, Row: knowledge.Row{Text: "Schedules of sync windows"},
			Ranks: map[knowledge.Primitive]int{knowledge.TextSparse: 1}},
	}
	c := confidenceOf("How do I configure Velero to back up Argo CD on a schedule?", hits)
	// "argo" is found: "argocd" holds it.
	if c.Similarity != float64(float32(0.62)) || c.Agreement != 0 || !slices.Equal(c.Missing, []string{"velero"}) {
		t.Fatalf("signals %+v", c)
	}
	if c.Score != nil {
		t.Error("a score without a background")
	}
	c = c.scored(knowledge.Background{Mean: 0.2, StdDev: 0.1})
	// 4.2 sigmas, 8 × 0.7 for standing 0.07 (0.7 sigmas) above the other
	// candidate, less 1 for no agreement and 0.5 for missing names.
	if math.Abs(*c.Sigmas-4.2) > 1e-6 || math.Abs(*c.Score-8.3) > 1e-5 {
		t.Errorf("sigmas %v score %v", *c.Sigmas, *c.Score)
	}
	// The same question where both searches agree and names are found.
	hits[0].Ranks[knowledge.TextSparse] = 2
	hits[0].Text += " with Velero"
	c = confidenceOf("How do I configure Velero to back up Argo CD on a schedule?", hits).scored(knowledge.Background{Mean: 0.2, StdDev: 0.1})
	if c.Agreement != 1 || len(c.Missing) != 0 || math.Abs(*c.Score-9.8) > 1e-5 {
		t.Errorf("agreeing: %+v score %v", c, *c.Score)
	}
}

func TestStandoutIsTheBestCandidatesLeadOverItsNeighbors(t *testing.T) {
	withSimilarities := func(similarities ...float32) []knowledge.Hit {
		hits := make([]knowledge.Hit, len(similarities))
		for i, s := range similarities {
			hits[i] = knowledge.Hit{Similarity: s}
		}
		return hits
	}
	cases := []struct {
		name string
		hits []knowledge.Hit
		want float64
	}{
		{"an answer a step above the rest", withSimilarities(0.5, 0.7, 0.5, 0.5), 0.2},
		{"a gap: all about as close", withSimilarities(0.61, 0.6, 0.6, 0.6), 0.01},
		// Only the next nine count: the eleventh does not lower the mean.
		{"nine neighbors", withSimilarities(0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0), 0.4},
		{"one candidate", withSimilarities(0.8), 0},
		{"none", nil, 0},
	}
	for _, tc := range cases {
		if got := standout(tc.hits); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMinConfidenceAnswersNotFound(t *testing.T) {
	index := &fakeIndex{hits: []knowledge.Hit{hit("a1", "a", 1, "prose")}} // similarity 0.75, found by no primitive's ranks
	gen := int64(1)
	s := newSearcher(index, &gen)
	background := knowledge.Background{Mean: 0.2, StdDev: 0.1}
	s.Background = func() *knowledge.Background { return &background }
	floor := 5.0 // 5.5 sigmas, less 1 for no agreement: 4.5
	s.Settings.MinConfidence = &floor
	r, err := s.Search(context.Background(), "how does it work", []string{"group:staff"})
	if err != nil || len(r.Fragments) != 0 || r.Confidence.Score == nil {
		t.Fatalf("below the floor: %v fragments, err %v, confidence %+v", len(r.Fragments), err, r.Confidence)
	}
	floor = 4
	r, _ = s.Search(context.Background(), "how does it work now", []string{"group:staff"})
	if len(r.Fragments) != 1 {
		t.Errorf("above the floor: %d fragments", len(r.Fragments))
	}
	s.Background = func() *knowledge.Background { return nil }
	floor = 20
	r, _ = s.Search(context.Background(), "how does it work today", []string{"group:staff"})
	if len(r.Fragments) != 1 {
		t.Errorf("without a background the rule must not apply: %d fragments", len(r.Fragments))
	}
}

// A name is held in any form of its stem, as coverage reads a word; a
// compound of English words is not a name, a compound with a coined part
// is, held as written or by one of its words; any other name only as
// written.
func TestMissingNamesReadStemsAndCompounds(t *testing.T) {
	text := "argocd notifications ship built-in triggers; a sync that fails fires on-sync-failed. the kube-proxy runs on each pod, as the policy says."
	cases := []struct {
		query string
		want  []string
	}{
		{"Which ready-made trigger fires on a sync-failure?", nil},
		{"Does kube-proxy read the built-in helm-secrets-plugin?", []string{"helm-secrets-plugin"}},
		{"Does the argocd-notifications-controller list Pods by their Policies?", nil},
		{"Which Pods does the etcd-defrag job list?", []string{"etcd-defrag"}},
		{"Is there a filter, e.g. on Velero backups?", []string{"velero"}},
	}
	for _, tc := range cases {
		if got := MissingNames(tc.query, text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: missing %q, want %q", tc.query, got, tc.want)
		}
	}
}
