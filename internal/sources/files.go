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
	"slices"
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

// ReadMarkdown reads every document of OpenMarkdown(root, dir,
// principals) into memory: for a corpus a caller holds whole (a test, an
// evaluation, `ragroute chunk`). An ingestion walks them one at a time
// (Markdown.Walk), so its memory does not grow with the source.
func ReadMarkdown(root, dir string, principals []string) (Read, error) {
	source, err := OpenMarkdown(root, dir, principals)
	if err != nil {
		return Read{}, err
	}
	defer source.Close()
	var read Read
	err = source.Walk(func(doc ingest.Document) error {
		read.Documents = append(read.Documents, doc)
		return nil
	}, func(refused error) { read.Refused = append(read.Refused, refused) })
	if err != nil {
		return Read{}, err
	}
	return read, nil
}

// Markdown is a source opened for reading: its root opened and its path
// checked, its documents still to read (Walk). Close releases it.
type Markdown struct {
	mount *os.Root
	// folder is the source's folder within mount; nil when the source is
	// one file, named file.
	folder     *os.Root
	file       string
	principals []string
	where      string // dir under root, for errors
}

// OpenMarkdown opens the Markdown files at dir within root: the file
// itself, or every *.md and *.markdown file below the folder. dir is
// slash-separated and relative to root ("" for root itself). Sources are
// relative to the folder (the file's base name for a file). Hidden files
// and folders (such as the ..data folder of a mounted ConfigMap) are
// skipped.
//
// root is what the caller trusts (a volume's mount, a fresh clone; a link
// naming it is followed) and nothing read leaves it: it is opened as an
// os.Root. dir is the source's own: neither it nor any folder between
// root and it may be a symbolic link (a PVC writer replacing docs with a
// link to another source's mount, to earlier clones or to / would make
// what it reaches this source's, readable by its principals), which
// fails the open, naming it. Below dir a symbolic link is followed only
// to a file inside dir (a mounted ConfigMap's files are such links), and
// only regular files are read, each through a bounded reader; a link out
// of dir (a committed docs/env.md -> /proc/self/environ would make the
// pod's secrets searchable) or to nothing, a FIFO, device or socket named
// like Markdown, or a file over ingest.MaxDocumentBytes is refused, and
// Walk names it.
func OpenMarkdown(root, dir string, principals []string) (*Markdown, error) {
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("read markdown: %w", err)
	}
	if info, err := os.Stat(root); err == nil && !info.IsDir() && dir == "" {
		root, dir = filepath.Dir(root), filepath.Base(root) // a file named on its own
	}
	mount, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("read markdown: %w", err)
	}
	source := &Markdown{mount: mount, principals: principals, where: fmt.Sprintf("%q under %s", dir, root)}
	if err := source.open(dir); err != nil {
		source.Close()
		return nil, err
	}
	return source, nil
}

// open checks dir within the mount and opens its folder, or names its file.
func (m *Markdown) open(dir string) error {
	rel, err := sourceFolder(m.mount, dir)
	if err != nil {
		return fmt.Errorf("read markdown at %s: %w", m.where, err)
	}
	info, err := m.mount.Lstat(rel)
	if err != nil {
		return fmt.Errorf("read markdown: %w", err)
	}
	if !info.IsDir() {
		m.file = rel
		return nil
	}
	if m.folder, err = m.mount.OpenRoot(rel); err != nil {
		return fmt.Errorf("read markdown at %s: %w", m.where, err)
	}
	return nil
}

// Close releases the source's folder and root.
func (m *Markdown) Close() {
	if m.folder != nil {
		_ = m.folder.Close()
	}
	_ = m.mount.Close()
}

// Walk reads the source's documents one at a time, in lexical order of
// their paths, and hands each to visit; each entry refused goes to
// refuse instead, and the walk goes on. It stops at the first error
// visit returns, returning it. A folder that cannot be listed fails the
// walk: what it would skip would be deleted from the store.
func (m *Markdown) Walk(visit func(ingest.Document) error, refuse func(error)) error {
	if m.folder == nil {
		doc, err := readDocument(m.mount, m.file, path.Base(m.file), m.principals)
		if err != nil {
			refuse(err)
			return nil
		}
		return visit(doc)
	}
	w := walk{folder: m.folder, principals: m.principals, visit: visit, refuse: refuse}
	if err := w.dir("."); err != nil {
		if errors.Is(err, errVisit) {
			return w.err
		}
		return fmt.Errorf("read markdown at %s: %w", m.where, err)
	}
	return nil
}

// errVisit marks a walk stopped by its visitor (walk.err says why).
var errVisit = errors.New("stopped by the visitor")

// walk is one Markdown.Walk of a folder.
type walk struct {
	folder     *os.Root
	principals []string
	visit      func(ingest.Document) error
	refuse     func(error)
	err        error // what visit returned
}

// dir reads the Markdown of folder p and below. Entries go in the order
// of their paths: a folder's entries sort by name, a folder's with a "/"
// after it (docs.md before docs/a.md, as the paths sort), so the walk
// keeps no list but the entries of the folders it is in.
func (w *walk) dir(p string) error {
	entries, err := fs.ReadDir(w.folder.FS(), p)
	if err != nil {
		return err
	}
	key := func(d fs.DirEntry) string {
		if d.IsDir() {
			return d.Name() + "/"
		}
		return d.Name()
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(key(a), key(b)) })
	for _, d := range entries {
		if strings.HasPrefix(d.Name(), ".") {
			continue
		}
		name := path.Join(p, d.Name())
		if d.IsDir() {
			if err := w.dir(name); err != nil {
				return err
			}
			continue
		}
		if !isMarkdown(d.Name()) {
			continue
		}
		if err := insideSource(w.folder, name, d); err != nil {
			w.refuse(err)
			continue
		}
		doc, err := readDocument(w.folder, name, name, w.principals)
		if err != nil {
			w.refuse(err)
			continue
		}
		if w.err = w.visit(doc); w.err != nil {
			return errVisit
		}
	}
	return nil
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
