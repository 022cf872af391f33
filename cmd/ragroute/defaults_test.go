package main

import (
	"fmt"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/server"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/sources"
)

// The eval measures the route body with retrieval's defaults; the operator
// renders the API's. They must be the same numbers.
func TestRetrievalDefaultsMatchTheAPI(t *testing.T) {
	weights := retrieval.DefaultWeights()
	if len(weights) != len(v1alpha1.DefaultSearchWeights) {
		t.Fatalf("weights %v, API %v", weights, v1alpha1.DefaultSearchWeights)
	}
	for p, w := range v1alpha1.DefaultSearchWeights {
		if weights[knowledge.Primitive(p)] != w {
			t.Errorf("%s weighs %g in retrieval, %g in the API", p, weights[knowledge.Primitive(p)], w)
		}
	}
	d := retrieval.DefaultDiversity()
	if d.MaxPerDocument != v1alpha1.DefaultMaxPerDocument || d.Margin != v1alpha1.DefaultDiversityMargin || d.Dominance != v1alpha1.DefaultDominance {
		t.Errorf("diversity %+v, API %d within %g, dominance %g", d, v1alpha1.DefaultMaxPerDocument, v1alpha1.DefaultDiversityMargin, v1alpha1.DefaultDominance)
	}
	if retrieval.DefaultFirstStageWeight != v1alpha1.DefaultCrossEncoderFirstStageWeight {
		t.Errorf("the cross-encoder's first-stage weight is %g in retrieval, %g in the API",
			retrieval.DefaultFirstStageWeight, v1alpha1.DefaultCrossEncoderFirstStageWeight)
	}
}

// Where the runtime keeps a default of its own for a field the operator
// renders (a config from an older operator, or one left at zero), it is
// the API's default: each pair is listed here, so a change to one side
// fails until the other follows.
func TestRuntimeDefaultsMatchTheAPI(t *testing.T) {
	chunking := ingest.DefaultOptions()
	pairs := []struct {
		name         string
		runtime, api any
	}{
		{"answer.grounding.supportThreshold", answer.DefaultGroundingThreshold, v1alpha1.DefaultGroundingThreshold},
		{"answer.grounding.fallbackBelow", answer.DefaultFallbackBelow, v1alpha1.DefaultFallbackBelow},
		{"model.maxToolCallsPerRound", turn.DefaultMaxToolCallsPerRound, v1alpha1.DefaultMaxToolCalls},
		{"model.idleTimeout", model.DefaultIdleTimeout, v1alpha1.DefaultModelIdleTimeout},
		{"timeouts.embed", retrieval.DefaultEmbedTimeout, v1alpha1.DefaultEmbedTimeout},
		{"timeouts.search", retrieval.DefaultSearchTimeout, v1alpha1.DefaultSearchTimeout},
		{"timeouts.rerank", retrieval.DefaultRerankTimeout, v1alpha1.DefaultRerankTimeout},
		{"limits.concurrentTurnsPerUser", server.DefaultLimits().ConcurrentTurnsPerUser, v1alpha1.DefaultConcurrentTurnsPerUser},
		{"limits.turnsPerMinutePerUser", server.DefaultLimits().TurnsPerMinutePerUser, v1alpha1.DefaultTurnsPerMinutePerUser},
		{"limits.maxInFlightTurns", server.DefaultLimits().MaxInFlightTurns, v1alpha1.DefaultMaxInFlightTurns},
		{"limits.maxSearchesInFlight", retrieval.DefaultMaxSearchesInFlight, v1alpha1.DefaultMaxSearchesInFlight},
		{"turns.maxMemoryMiB", turnlog.DefaultMaxBytes >> 20, v1alpha1.DefaultTurnMaxMemoryMiB},
		{"ingestion.chunking.maxTokens", chunking.MaxTokens, v1alpha1.DefaultChunkMaxTokens},
		{"ingestion.chunking.overlapTokens", chunking.OverlapTokens, v1alpha1.DefaultChunkOverlapTokens},
		{"ingestion.chunking.mergeBelowTokens", chunking.MergeBelowTokens, v1alpha1.DefaultChunkMergeBelowTokens},
		{"access.frontMatterKey", chunking.FrontMatterKey, v1alpha1.DefaultFrontMatterKey},
		{"ingestion.sources[].git.timeout", sources.DefaultCloneTimeout, v1alpha1.DefaultGitTimeout},
	}
	for _, p := range pairs {
		if fmt.Sprint(p.runtime) != fmt.Sprint(p.api) {
			t.Errorf("%s: the runtime's default is %v, the API's %v", p.name, p.runtime, p.api)
		}
	}
}
