package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// cancelling counts tokens and cancels a context at its at-th count.
type cancelling struct {
	tokenize.Counter
	cancel    context.CancelFunc
	at, calls int
}

func (c *cancelling) Count(text string) int {
	if c.calls++; c.calls == c.at {
		c.cancel()
	}
	return c.Counter.Count(text)
}

// Chunking gives up soon after its context is done, wherever it is (the
// heading tree, splitting, packing parts): an ingestion's per-document
// deadline is honoured by the chunker's loops, not found once it has
// finished. Counting tokens is most of its work, so the counts made
// after the cancel measure how soon it stopped.
func TestChunkingStopsSoonAfterItsContextIsDone(t *testing.T) {
	var doc strings.Builder
	for i := range 300 {
		fmt.Fprintf(&doc, "## Section %d\n\n", i)
		for range 4 {
			doc.WriteString(strings.Repeat("Words of a paragraph that goes on. ", 12) + "\n\n")
		}
		doc.WriteString("| a | b |\n|---|---|\n" + strings.Repeat("| cell | cell |\n", 40) + "\n")
	}
	document := Document{Source: "long.md", Content: doc.String(), Principals: []string{"public"}}
	opts := DefaultOptions()
	all := &cancelling{Counter: opts.Tokens, cancel: func() {}}
	opts.Tokens = all
	if _, err := ChunksContext(context.Background(), document, opts); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{1, all.calls / 4, all.calls / 2, all.calls * 9 / 10} {
		ctx, cancel := context.WithCancel(context.Background())
		counter := &cancelling{Counter: DefaultOptions().Tokens, cancel: cancel, at: at}
		opts.Tokens = counter
		_, err := ChunksContext(ctx, document, opts)
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "long.md: ") {
			t.Errorf("cancelled at count %d of %d: err %v, want the document named and context.Canceled", at, all.calls, err)
		}
		if after := counter.calls - at; after > 200 {
			t.Errorf("cancelled at count %d of %d: %d counts after, want at most 200", at, all.calls, after)
		}
		cancel()
	}
}

// A document whose chunks would repeat more than MaxRepeatRatio times
// its bytes is refused as the repeats are made: a 25 KB table header
// (one "word", one token) over rows of one short cell, written again in
// every part. An ordinary long table, its header repeated too, is not.
func TestADocumentWhoseChunksRepeatTooMuchIsRefused(t *testing.T) {
	header := "| " + strings.Repeat("h", 25<<10) + " |\n|---|\n"
	rows := strings.Repeat("| a |\n", 2000)
	_, err := Chunks(Document{Source: "wide.md", Content: "# Wide\n\n" + header + rows}, DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "wide.md: its chunks would repeat more than") {
		t.Errorf("Chunks() = %v, want wide.md refused for its repeats", err)
	}
	table := "# Table\n\n| Name | Value |\n|---|---|\n" + strings.Repeat("| a setting | its value, in a few words |\n", 2000)
	chunks, err := Chunks(Document{Source: "table.md", Content: table}, DefaultOptions())
	if err != nil || len(chunks) < 10 {
		t.Errorf("an ordinary long table: %d chunks, %v", len(chunks), err)
	}
}
