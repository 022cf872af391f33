package main

import (
	"path/filepath"
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The measured route is the operator's defaults, rendered by the operator,
// pointed at the harness' servers: it validates, and keeps the defaults.
func TestThePerfRouteIsTheOperatorsDefaults(t *testing.T) {
	o := options{route: filepath.Join("route.yaml"), milvusURI: "http://127.0.0.1:1", embedderModel: "all-MiniLM-L6-v2", dims: 384, maxInputTokens: 256}
	for _, cached := range []bool{false, true} {
		cfg, err := routeConfig(o, 8080, "http://127.0.0.1:2/v1", "http://127.0.0.1:3/v1", cached)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("cached %v: %v", cached, err)
		}
		if cfg.Retrieval.MaxFragments != v1alpha1.DefaultMaxFragments || !cfg.Retrieval.Research || cfg.Store.Milvus.Collection != collection {
			t.Errorf("cached %v: not the operator's defaults: %+v", cached, cfg.Retrieval)
		}
		if got := cfg.Cache.MaxEntries > 0; got != cached {
			t.Errorf("cached %v: cache entries %d", cached, cfg.Cache.MaxEntries)
		}
	}
}
