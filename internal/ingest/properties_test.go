package ingest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpusDocuments reads the eval corpus kept in the repo.
func corpusDocuments(t testing.TB) []Document {
	t.Helper()
	root := filepath.Join("..", "..", "test", "eval", "corpus", "argocd")
	var docs []Document
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || d.Name() == "SOURCE.md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		docs = append(docs, Document{Source: filepath.ToSlash(rel), Content: string(data), Principals: []string{"group:staff"}})
		return nil
	})
	if err != nil || len(docs) != 190 {
		t.Fatalf("corpus: %d documents, %v", len(docs), err)
	}
	return docs
}

// checkInvariants asserts what every chunking must guarantee: no chunk over
// the threshold, unique ids, parts numbered and linked, and no content lost.
func checkInvariants(t testing.TB, doc Document, opts Options, chunks []Chunk) {
	t.Helper()
	ids := map[string]bool{}
	for _, ch := range chunks {
		if ch.Tokens > opts.MaxTokens || opts.Tokens.Count(ch.Text) != ch.Tokens {
			t.Errorf("%s %v part %d: %d tokens (counted %d), threshold %d", doc.Source, ch.HeadingPath, ch.PartIndex, ch.Tokens, opts.Tokens.Count(ch.Text), opts.MaxTokens)
		}
		if len(ch.Text) > MaxTextBytes || len(ch.Title) > MaxTitleBytes || !utf8.ValidString(ch.Title) {
			t.Errorf("%s %v part %d: text of %d bytes, title of %d: over the store's limits or cut inside a character", doc.Source, ch.HeadingPath, ch.PartIndex, len(ch.Text), len(ch.Title))
		}
		for _, h := range ch.HeadingPath {
			if len(h) > MaxHeadingBytes {
				t.Errorf("%s: a heading of %d bytes, over %d", doc.Source, len(h), MaxHeadingBytes)
			}
		}
		if ids[ch.ID] {
			t.Errorf("%s: duplicate id %s", doc.Source, ch.ID)
		}
		ids[ch.ID] = true
		if (ch.PartCount > 1) != (ch.ParentID != "") || ch.PartIndex < 1 || ch.PartIndex > ch.PartCount {
			t.Errorf("%s %v: part %d of %d, parent %q", doc.Source, ch.HeadingPath, ch.PartIndex, ch.PartCount, ch.ParentID)
		}
	}
	checkNothingLost(t, doc, opts, chunks)
}

// checkNothingLost: every non-blank body line reaches a chunk verbatim (or,
// for a heading, a heading path); a line too long for one part must have
// all its words in the chunks.
func checkNothingLost(t testing.TB, doc Document, opts Options, chunks []Chunk) {
	t.Helper()
	_, body, err := readerBody(doc.Content, opts.FrontMatterKey)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	words := map[string]int{}
	for _, ch := range chunks {
		all.WriteString(ch.Text + "\n")
		for _, h := range ch.HeadingPath {
			all.WriteString(h + "\n")
		}
		for _, w := range strings.Fields(ch.Text) {
			words[w]++
		}
	}
	text := all.String()
	need := map[string]int{}
	budget := opts.MaxTokens - opts.OverlapTokens
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(text, line) {
			continue
		}
		if m := headingLine.FindStringSubmatch(line); m != nil && strings.Contains(text, cutBytes(strings.TrimSpace(m[2]), MaxHeadingBytes)) {
			continue
		}
		if opts.Tokens.Count(line) <= budget && len(line) <= partBytes {
			t.Errorf("%s: line lost: %q", doc.Source, line)
			continue
		}
		for _, w := range strings.Fields(line) {
			need[w]++
		}
	}
	for w, n := range need {
		if words[w] < n && !coveredInPieces(w, text) {
			t.Errorf("%s: word %q lost from a long line", doc.Source, w)
		}
	}
}

// coveredInPieces reports whether w is in text, whole or cut into pieces
// (a word longer than a part is cut by characters).
func coveredInPieces(w, text string) bool {
	for i := 0; i < len(w); {
		j := len(w)
		for j > i && !strings.Contains(text, w[i:j]) {
			j--
		}
		if j == i {
			return false
		}
		i = j
	}
	return true
}

func TestCorpusChunksKeepInvariants(t *testing.T) {
	opts := DefaultOptions()
	total, parts := 0, 0
	types := map[ChunkType]int{}
	for _, doc := range corpusDocuments(t) {
		chunks, err := Chunks(doc, opts)
		if err != nil {
			t.Fatalf("%s: %v", doc.Source, err)
		}
		if len(chunks) == 0 {
			t.Errorf("%s: no chunks", doc.Source)
		}
		checkInvariants(t, doc, opts, chunks)
		total += len(chunks)
		for _, ch := range chunks {
			types[ch.Type]++
			if ch.PartCount > 1 {
				parts++
			}
		}
	}
	t.Logf("%d chunks (%d parts of split sections), by type %v", total, parts, types)
}
