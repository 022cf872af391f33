package main

import (
	"path/filepath"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// The measured route is the operator's defaults, rendered by the operator,
// pointed at the harness' servers: it validates, and keeps the defaults;
// only ragroute-cached keeps the cache, only ragroute-dense searches the
// text's dense vectors alone.
func TestThePerfRouteIsTheOperatorsDefaults(t *testing.T) {
	o := options{route: filepath.Join("route.yaml"), milvusURI: "http://127.0.0.1:1", embedderModel: "all-MiniLM-L6-v2", dims: 384, maxInputTokens: 256}
	for _, system := range []string{"ragroute", "ragroute-cached", "ragroute-dense"} {
		cfg, err := routeConfig(o, 8080, "http://127.0.0.1:2/v1", "http://127.0.0.1:3/v1", system)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", system, err)
		}
		if cfg.Retrieval.MaxFragments != v1alpha1.DefaultMaxFragments || !cfg.Retrieval.Research || cfg.Store.Milvus.Collection != collection {
			t.Errorf("%s: not the operator's defaults: %+v", system, cfg.Retrieval)
		}
		if got, want := cfg.Cache.MaxEntries > 0, system == "ragroute-cached"; got != want {
			t.Errorf("%s: cache entries %d", system, cfg.Cache.MaxEntries)
		}
		searched := 0
		for _, w := range cfg.Store.Search.Weights {
			if w > 0 {
				searched++
			}
		}
		denseOnly := searched == 1 && cfg.Store.Search.Weights[string(knowledge.TextDense)] > 0
		if denseOnly != (system == "ragroute-dense") {
			t.Errorf("%s: weights %v", system, cfg.Store.Search.Weights)
		}
	}
}
