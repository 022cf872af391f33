package main

import (
	"strings"
	"testing"
)

func TestParsesBenchmarkLinesAndPassesEverythingThrough(t *testing.T) {
	in := `goos: linux
pkg: github.com/ragroute/ragroute/internal/knowledge
BenchmarkSearch/hybrid4-acl-2    	      30	  42411848 ns/op	        29.47 p50_ms
BenchmarkChunkCorpus-2   	       5	 198783415 ns/op	   7.48 MB/s	35544657 B/op	  280230 allocs/op
--- FAIL: something
ok  	github.com/ragroute/ragroute/internal/knowledge	6.569s
`
	var out strings.Builder
	results, err := copyAndParse(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("output changed:\n%s", out.String())
	}
	if len(results) != 2 {
		t.Fatalf("results %+v, want 2", results)
	}
	first := results[0]
	if first.Name != "BenchmarkSearch/hybrid4-acl" || first.Package != "github.com/ragroute/ragroute/internal/knowledge" ||
		first.Iterations != 30 || first.Metrics["p50_ms"] != 29.47 || first.Metrics["ns/op"] != 42411848 {
		t.Errorf("first %+v", first)
	}
	if results[1].Metrics["MB/s"] != 7.48 || results[1].Metrics["allocs/op"] != 280230 {
		t.Errorf("second %+v", results[1])
	}
}
