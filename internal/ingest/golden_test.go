package ingest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/tokenize"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// goldenOptions are small thresholds, so small documents show splitting.
func goldenOptions() Options {
	return Options{MaxTokens: 100, OverlapTokens: 10, MergeBelowTokens: 20, FrontMatterKey: "acl", Tokens: tokenize.NewBERTUncased()}
}

// TestChunkGoldens chunks representative documents and compares the JSON
// lines `ragroute chunk` would print with testdata/golden.
func TestChunkGoldens(t *testing.T) {
	paths, err := fixtures()
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test documents: %v", err)
	}
	opts := goldenOptions()
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".md")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			principals := []string{"group:staff"}
			if name == "frontmatter-acl" {
				// Its front matter narrows the source to two of its principals.
				principals = append(principals, "group:sre", "user:alice")
			}
			doc := Document{Source: filepath.Base(path), Content: string(data), Principals: principals}
			chunks, err := Chunks(doc, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, doc, opts, chunks)
			var got bytes.Buffer
			enc := json.NewEncoder(&got)
			enc.SetEscapeHTML(false)
			for _, ch := range chunks {
				if err := enc.Encode(ch); err != nil {
					t.Fatal(err)
				}
			}
			golden := filepath.Join("testdata", "golden", name+".jsonl")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create): %v", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("chunks differ from %s (run `go test ./internal/ingest -run TestChunkGoldens -update` if intended):\n%s", golden, got.String())
			}
		})
	}
}

// fixtures are the test documents: testdata/docs (written for these
// tests, also ingested by cmd/ragroute's test route) and testdata/hugo
// (real OpenTelemetry pages, kept apart so that route's store does not
// grow with them).
func fixtures() ([]string, error) {
	var paths []string
	for _, dir := range []string{"docs", "hugo"} {
		found, err := filepath.Glob(filepath.Join("testdata", dir, "*.md"))
		if err != nil {
			return nil, err
		}
		paths = append(paths, found...)
	}
	return paths, nil
}
