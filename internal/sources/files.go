// Package sources reads Markdown documents for ingestion from the places a
// KnowledgeStore names: folders (a mounted ConfigMap or PVC path) and Git
// repositories (cloned with a pure-Go client). It never talks to the
// Kubernetes API: the ingest Job mounts what it needs.
package sources

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/ragroute/ragroute/internal/ingest"
)

// Read is what a source gave a run: the documents read, and an error
// naming each Markdown entry refused (a link out of the source or to
// nothing, a FIFO or device, a file over the size limit). A refused
// entry does not stop the others.
type Read struct {
	Documents []ingest.Document
	Refused   []error
}

// ReadMarkdown reads the Markdown files at dir within root: the file
// itself, or every *.md and *.markdown file below the folder, in lexical
// order. dir is slash-separated and relative to root ("" for root
// itself). Sources are relative to the folder (the file's base name for
// a file). Hidden files and folders (such as the ..data folder of a
// mounted ConfigMap) are skipped.
//
// root is what the caller trusts (a volume's mount, a fresh clone; a link
// naming it is followed) and nothing read leaves it: it is opened as an
// os.Root. dir is the source's own: neither it nor any folder between
// root and it may be a symbolic link (a PVC writer replacing docs with a
// link to another source's mount, to earlier clones or to / would make
// what it reaches this source's, readable by its principals), which
// fails the read, naming it. Below dir a symbolic link is followed only
// to a file inside dir (a mounted ConfigMap's files are such links), and
// only regular files are read, each through a bounded reader; a link out
// of dir (a committed docs/env.md -> /proc/self/environ would make the
// pod's secrets searchable) or to nothing, a FIFO, device or socket named
// like Markdown, or a file over ingest.MaxDocumentBytes is refused,
// named in Read.Refused.
func ReadMarkdown(root, dir string, principals []string) (Read, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return Read{}, fmt.Errorf("read markdown: %w", err)
	}
	if info, err := os.Stat(root); err == nil && !info.IsDir() && dir == "" {
		root, dir = filepath.Dir(root), filepath.Base(root) // a file named on its own
	}
	mount, err := os.OpenRoot(root)
	if err != nil {
		return Read{}, fmt.Errorf("read markdown: %w", err)
	}
	defer mount.Close()
	rel, err := sourceFolder(mount, dir)
	if err != nil {
		return Read{}, fmt.Errorf("read markdown at %q under %s: %w", dir, root, err)
	}
	info, err := mount.Lstat(rel)
	if err != nil {
		return Read{}, fmt.Errorf("read markdown: %w", err)
	}
	if !info.IsDir() {
		doc, err := readDocument(mount, rel, path.Base(rel), principals)
		if err != nil {
			return Read{Refused: []error{err}}, nil
		}
		return Read{Documents: []ingest.Document{doc}}, nil
	}
	folder, err := mount.OpenRoot(rel)
	if err != nil {
		return Read{}, fmt.Errorf("read markdown at %q under %s: %w", dir, root, err)
	}
	defer folder.Close()
	read, err := readFolder(folder, principals)
	if err != nil {
		return Read{}, fmt.Errorf("read markdown at %q under %s: %w", dir, root, err)
	}
	return read, nil
}

// sourceFolder is dir as a name within mount, once it is checked that
// neither it nor a folder above it is a symbolic link. (A writer who
// swaps one in afterwards reaches no further than the mount: every read
// goes through it.)
func sourceFolder(mount *os.Root, dir string) (string, error) {
	rel, err := localPath(dir)
	if err != nil || rel == "." {
		return rel, err
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		at := strings.Join(parts[:i+1], "/")
		info, err := mount.Lstat(at)
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			what := "the source's path"
			if i < len(parts)-1 {
				what = "a folder above the source's path " + rel
			}
			return "", fmt.Errorf("%s is a symbolic link, %s: refused (a source's path and the folders above it must not be links)", at, what)
		}
	}
	return rel, nil
}

// readFolder reads the Markdown under folder. A walk that cannot list a
// folder fails: what it would skip would be deleted from the store.
func readFolder(folder *os.Root, principals []string) (Read, error) {
	var read Read
	err := fs.WalkDir(folder.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isMarkdown(d.Name()) {
			return nil
		}
		if err := insideSource(folder, p, d); err != nil {
			read.Refused = append(read.Refused, err)
			return nil
		}
		doc, err := readDocument(folder, p, p, principals)
		if err != nil {
			read.Refused = append(read.Refused, err)
			return nil
		}
		read.Documents = append(read.Documents, doc)
		return nil
	})
	if err != nil {
		return Read{}, err
	}
	sort.Slice(read.Documents, func(i, j int) bool { return read.Documents[i].Source < read.Documents[j].Source })
	return read, nil
}

// localPath is a source's path within its volume or repository, cleaned
// and slash-separated ("." for the whole; a leading slash is the root's),
// or an error when it climbs out.
func localPath(p string) (string, error) {
	rel := strings.TrimLeft(filepath.ToSlash(p), "/")
	if rel == "" {
		return ".", nil
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q leaves its volume or repository", p)
	}
	return path.Clean(rel), nil
}

func isMarkdown(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// insideSource checks that entry p of folder, when a symbolic link, leads
// to something inside folder: a relative link that never climbs out.
func insideSource(folder *os.Root, p string, d fs.DirEntry) error {
	if d.Type()&fs.ModeSymlink == 0 {
		return nil
	}
	_, err := folder.Stat(p)
	if err == nil {
		return nil
	}
	target, _ := folder.Readlink(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: a link to %s, which leads nowhere: refused", p, target)
	}
	return fmt.Errorf("%s links to %s, outside the source (a link must be relative and stay inside it): refused", p, target)
}

// readDocument reads one regular file of folder, at most
// ingest.MaxDocumentBytes of it. It opens the file without blocking,
// then checks what it opened: a FIFO swapped in between cannot hang the
// run.
func readDocument(folder *os.Root, name, source string, principals []string) (ingest.Document, error) {
	f, err := folder.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
	data, err := io.ReadAll(io.LimitReader(f, ingest.MaxDocumentBytes+1))
	if err != nil {
		return ingest.Document{}, fmt.Errorf("read %s: %w", source, err)
	}
	if len(data) > ingest.MaxDocumentBytes {
		return ingest.Document{}, fmt.Errorf("%s is over %d bytes, the limit for one document: refused", source, ingest.MaxDocumentBytes)
	}
	return ingest.Document{Source: source, Content: string(data), Principals: principals}, nil
}
