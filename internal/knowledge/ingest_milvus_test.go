package knowledge

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/sources"
	"github.com/ragroute/ragroute/internal/testenv"
)

const testDim = 64

// corpusRows chunks the eval corpus (SOURCE.md is metadata, left out).
func corpusRows(t testing.TB, edit func(map[string]string)) []Row {
	t.Helper()
	read, err := sources.ReadMarkdown(filepath.Join("..", "..", "test", "eval", "corpus", "argocd"), "", []string{"group:staff"})
	if err != nil || len(read.Refused) > 0 {
		t.Fatal(err, read.Refused)
	}
	docs := read.Documents
	contents := map[string]string{}
	for _, d := range docs {
		if d.Source != "SOURCE.md" {
			contents[d.Source] = d.Content
		}
	}
	if edit != nil {
		edit(contents)
	}
	var kept []ingest.Document
	for _, d := range docs {
		if content, ok := contents[d.Source]; ok {
			d.Content = content
			kept = append(kept, d)
		}
	}
	return rowsOf(t, kept)
}

// rowsOf chunks documents with the default options.
func rowsOf(t testing.TB, docs []ingest.Document) []Row {
	t.Helper()
	var rows []Row
	for _, d := range docs {
		chunks, err := ingest.Chunks(d, ingest.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			rows = append(rows, rowOf(ch))
		}
	}
	return rows
}

// rowOf stores a chunk as the ingestion run does; the run's own conversion
// lives above this package (it imports knowledge), so tests keep a copy.
func rowOf(ch ingest.Chunk) Row {
	return Row{
		ID: ch.ID, DocID: ch.DocID, Source: ch.Source, SourceURI: ch.URI, Title: ch.Title,
		HeadingPath: ch.HeadingPath, ChunkType: string(ch.Type), Kind: string(ch.Kind),
		PartIndex: int64(ch.PartIndex), PartCount: int64(ch.PartCount), ParentID: ch.ParentID,
		ImageURLs: ch.ImageURLs, ACL: ch.ACL, ContentHash: ch.ContentHash, Text: ch.Text, Flagged: ch.Flagged,
	}
}

func TestCorpusIngestIsIdempotentAndIncremental(t *testing.T) {
	store := testStore(t, testDim)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	embedder := &testenv.HashEmbedder{Dim: testDim}

	rows := corpusRows(t, nil)
	first, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NewGeneration || first.Written != len(rows) || first.Rows != int64(len(rows)) {
		t.Fatalf("first ingest %+v, want a new generation holding all %d chunks", first, len(rows))
	}
	t.Logf("corpus: %d chunks in %s", len(rows), first.Generation.Collection)

	calls := embedder.Calls
	second, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if second.Written != 0 || second.Deleted != 0 || second.NewGeneration || embedder.Calls != calls {
		t.Fatalf("second ingest %+v (%d embed calls): want nothing written or embedded", second, embedder.Calls-calls)
	}

	// Editing one file rewrites only that file's changed chunks.
	edited := corpusRows(t, func(c map[string]string) {
		c["faq.md"] = strings.Replace(c["faq.md"], "\n## ", "\n\nThis sentence was added by an editor.\n\n## ", 1)
	})
	changed := changedIDs(rows, edited)
	third, err := store.Ingest(ctx, RowsOf(edited), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if third.Written == 0 || third.Written != len(changed.written) || third.Deleted != len(changed.deleted) {
		t.Fatalf("edit ingest %+v, want %d written and %d deleted", third, len(changed.written), len(changed.deleted))
	}
	for _, src := range changed.sources {
		if src != "faq.md" {
			t.Errorf("editing faq.md rewrote a chunk of %s", src)
		}
	}

	// Deleting a file deletes its chunks.
	var gone int
	for _, r := range edited {
		if r.Source == "faq.md" {
			gone++
		}
	}
	fourth, err := store.Ingest(ctx, RowsOf(corpusRows(t, func(c map[string]string) { delete(c, "faq.md") })), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Deleted != gone || fourth.Written != 0 || fourth.Rows != int64(len(edited)-gone) {
		t.Fatalf("delete ingest %+v, want %d deleted and %d rows left", fourth, gone, len(edited)-gone)
	}
}

type diff struct {
	written, deleted, sources []string
}

func changedIDs(before, after []Row) diff {
	old := map[string]string{}
	for _, r := range before {
		old[r.ID] = r.ContentHash
	}
	var d diff
	seen := map[string]bool{}
	for _, r := range after {
		seen[r.ID] = true
		if old[r.ID] != r.ContentHash {
			d.written = append(d.written, r.ID)
			d.sources = append(d.sources, r.Source)
		}
	}
	for id := range old {
		if !seen[id] {
			d.deleted = append(d.deleted, id)
		}
	}
	return d
}

// Two chunks with one id are an error naming it, and the sync stops
// before deleting anything: the rows the stream did not reach are still
// served.
func TestTwoChunksWithOneIDStopTheSyncNamingIt(t *testing.T) {
	store := testStore(t, testDim)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	rows := corpusRows(t, nil)[:10]
	if _, err := store.Ingest(ctx, RowsOf(rows), embedder, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	twice := append(slices.Clone(rows[:3]), rows[1])
	_, err := store.Ingest(ctx, RowsOf(twice), embedder, "hash-64", SyncOptions{})
	if err == nil || !strings.Contains(err.Error(), "two chunks share id "+rows[1].ID) {
		t.Fatalf("err %v, want the id %s named", err, rows[1].ID)
	}
	state, err := store.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if state.Rows != int64(len(rows)) {
		t.Errorf("%d rows after the refused sync, want all %d still there", state.Rows, len(rows))
	}
}
