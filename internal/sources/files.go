// Package sources reads Markdown documents for ingestion from the places a
// KnowledgeStore names: folders (a mounted ConfigMap or PVC path) and Git
// repositories (cloned with a pure-Go client). It never talks to the
// Kubernetes API: the ingest Job mounts what it needs.
package sources

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragroute/ragroute/internal/ingest"
)

// maxDocumentBytes bounds one Markdown file; a larger one is refused with
// its name rather than read into memory.
const maxDocumentBytes = 8 << 20

// ReadMarkdown reads the Markdown files at path: the file itself, or every
// *.md and *.markdown file below a folder, in lexical order. Sources are
// relative to the folder (the file's base name for a file). Hidden files
// and folders (such as the ..data links of a mounted ConfigMap) are skipped.
func ReadMarkdown(path string, principals []string) ([]ingest.Document, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read markdown: %w", err)
	}
	if !info.IsDir() {
		doc, err := readDocument(path, filepath.Base(path), principals)
		if err != nil {
			return nil, err
		}
		return []ingest.Document{doc}, nil
	}
	var docs []ingest.Document
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isMarkdown(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		doc, err := readDocument(p, filepath.ToSlash(rel), principals)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read markdown under %s: %w", path, err)
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].Source < docs[j].Source })
	return docs, nil
}

func isMarkdown(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

func readDocument(path, source string, principals []string) (ingest.Document, error) {
	info, err := os.Stat(path)
	if err != nil {
		return ingest.Document{}, fmt.Errorf("read %s: %w", path, err)
	}
	if info.Size() > maxDocumentBytes {
		return ingest.Document{}, fmt.Errorf("%s is %d bytes; the limit for one document is %d", path, info.Size(), maxDocumentBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ingest.Document{}, fmt.Errorf("read %s: %w", path, err)
	}
	return ingest.Document{Source: source, Content: string(data), Principals: principals}, nil
}
