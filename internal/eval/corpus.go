package eval

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/sources"
)

// ReadCorpus reads the public Markdown of the corpus folder dir, its
// SOURCE.md notice left out, each document named as ingestion names it:
// source (the route's name for the corpus) in front of its path, so
// results read as the route's /v1/search reports them.
func ReadCorpus(dir, source string) ([]ingest.Document, error) {
	read, err := sources.ReadMarkdown(dir, "", []string{"public"})
	if err == nil {
		err = errors.Join(read.Refused...)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	var out []ingest.Document
	for _, d := range read.Documents {
		if filepath.Base(d.Source) == "SOURCE.md" {
			continue
		}
		d.Source = source + "/" + d.Source
		out = append(out, d)
	}
	return out, nil
}
