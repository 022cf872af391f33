// Package sources reads Markdown documents for ingestion from the places a
// KnowledgeStore names: folders (a mounted ConfigMap or PVC path) and Git
// repositories (cloned with a pure-Go client). It never talks to the
// Kubernetes API: the ingest Job mounts what it needs.
package sources

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/ragroute/ragroute/internal/ingest"
)

// maxDocumentBytes bounds one Markdown file; a larger one is refused with
// its name rather than read into memory.
const maxDocumentBytes = 8 << 20

// ReadMarkdown reads the Markdown files at path: the file itself, or every
// *.md and *.markdown file below a folder, in lexical order. Sources are
// relative to the folder (the file's base name for a file). Hidden files
// and folders (such as the ..data folder of a mounted ConfigMap) are
// skipped.
//
// It reads only what the source holds: a symbolic link is followed only
// to a file inside the source (a mounted ConfigMap's files are such
// links), and only regular files are read, each through a bounded reader.
// A link out of the source (a committed docs/env.md ->
// /proc/self/environ would make the pod's secrets searchable) or a FIFO,
// device or socket named like Markdown fails the read, naming it.
func ReadMarkdown(path string, principals []string) ([]ingest.Document, error) {
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("read markdown: %w", err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("read markdown: %w", err)
	}
	if !info.IsDir() {
		doc, err := readDocument(root, filepath.Base(path), principals)
		if err != nil {
			return nil, err
		}
		return []ingest.Document{doc}, nil
	}
	var docs []ingest.Document
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isMarkdown(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		file, err := insideSource(root, p, rel, d)
		if err != nil {
			return err
		}
		doc, err := readDocument(file, filepath.ToSlash(rel), principals)
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

// insideSource is the file to read for entry p (rel within root): p
// itself, or where its symbolic link leads, which must be inside root.
func insideSource(root, p, rel string, d fs.DirEntry) (string, error) {
	if d.Type()&fs.ModeSymlink == 0 {
		return p, nil
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s: a link that leads nowhere: %w", rel, err)
	}
	if within, err := filepath.Rel(root, target); err != nil || within == ".." || strings.HasPrefix(within, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s links to %s, outside the source: refused", rel, target)
	}
	return target, nil
}

// readDocument reads one regular file, at most maxDocumentBytes of it.
// It opens the file without following a link and without blocking, then
// checks what it opened: a FIFO swapped in between cannot hang the run.
func readDocument(path, source string, principals []string) (ingest.Document, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ingest.Document{}, fmt.Errorf("read %s: %w", source, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ingest.Document{}, fmt.Errorf("read %s: %w", source, err)
	}
	if !info.Mode().IsRegular() {
		return ingest.Document{}, fmt.Errorf("%s is not a regular file (%s): refused", source, info.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDocumentBytes+1))
	if err != nil {
		return ingest.Document{}, fmt.Errorf("read %s: %w", source, err)
	}
	if len(data) > maxDocumentBytes {
		return ingest.Document{}, fmt.Errorf("%s is over %d bytes, the limit for one document", source, maxDocumentBytes)
	}
	return ingest.Document{Source: source, Content: string(data), Principals: principals}, nil
}
