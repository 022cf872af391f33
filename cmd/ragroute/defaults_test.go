package main

import (
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
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
}

// The operator renders the API's grounding defaults; the runtime falls back
// to its own when a config leaves them at zero. They must agree.
func TestGroundingDefaultsMatchTheAPI(t *testing.T) {
	if answer.DefaultGroundingThreshold != v1alpha1.DefaultGroundingThreshold || answer.DefaultFallbackBelow != v1alpha1.DefaultFallbackBelow {
		t.Errorf("route: threshold %g, fallback below %g; API: %g, %g", answer.DefaultGroundingThreshold, answer.DefaultFallbackBelow,
			v1alpha1.DefaultGroundingThreshold, v1alpha1.DefaultFallbackBelow)
	}
}
