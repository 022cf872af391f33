package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A document whose title, headings or words are longer than the store's
// fields is still ingested: the title and headings are cut (by bytes,
// between characters) and a 70 KiB "word" (one token to BERT, which the
// token budget alone never cut) is split, so that no row refused by the
// schema stops the store's whole ingestion.
func TestChunksHoldTheStoresLimits(t *testing.T) {
	word := strings.Repeat("ab", 35<<10) // 70 KiB, no space
	cases := map[string]string{
		"a long front-matter title":  "---\ntitle: " + strings.Repeat("é", 1500) + "\n---\n# Intro\n\nText.\n",
		"a long heading":             "# " + strings.Repeat("ü", 400) + "\n\nText under it.\n\n## " + strings.Repeat("x", 600) + "\n\n" + strings.Repeat("Body words. ", 20) + "\n",
		"a word of 70 KiB":           "# Keys\n\n" + word + "\n",
		"a word of 70 KiB in a list": "# Keys\n\n- " + word + "\n- short\n",
		"a code line of 70 KiB":      "# Code\n\n```\n" + word + "\n```\n",
		"a table row of 70 KiB":      "# Table\n\n| a | b |\n|---|---|\n| " + word + " | x |\n",
	}
	opts := DefaultOptions()
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			doc := Document{Source: "long.md", Content: content, Principals: []string{"public"}}
			chunks, err := Chunks(doc, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, doc, opts, chunks)
			for _, ch := range chunks {
				if !utf8.ValidString(ch.Text) {
					t.Errorf("part %d cut inside a character", ch.PartIndex)
				}
				for _, h := range ch.HeadingPath {
					if !utf8.ValidString(h) {
						t.Errorf("heading %q cut inside a character", h)
					}
				}
			}
		})
	}
	chunks, err := Chunks(Document{Source: "t.md", Content: "---\ntitle: " + strings.Repeat("é", 1500) + "\n---\nText.\n"}, opts)
	if err != nil || len(chunks) != 1 || chunks[0].Title != strings.Repeat("é", MaxTitleBytes/2) {
		t.Errorf("title cut to %d bytes, want %d (%v)", len(chunks[0].Title), MaxTitleBytes, err)
	}
}

// A document that would make more chunks than MaxChunksPerDocument is
// refused, naming it: 8 MiB of one-line sections would otherwise make
// over a million chunks. It is refused from its headings before its tree
// is built, and from its parts when one long text would make too many.
func TestADocumentOfTooManyChunksIsRefused(t *testing.T) {
	headings := strings.Repeat("# h\n", MaxChunksPerDocument+1)
	if _, err := Chunks(Document{Source: "headings.md", Content: headings}, DefaultOptions()); err == nil ||
		!strings.Contains(err.Error(), "headings.md: more than 16384 headings") {
		t.Errorf("Chunks() = %v, want the document refused for its headings", err)
	}
	opts := DefaultOptions()
	opts.MaxTokens, opts.OverlapTokens, opts.MergeBelowTokens = 16, 0, 0
	words := strings.Repeat("word ", 16*(MaxChunksPerDocument+1))
	if _, err := Chunks(Document{Source: "words.md", Content: words}, opts); err == nil ||
		!strings.Contains(err.Error(), "words.md: more than 16384 chunks") {
		t.Errorf("Chunks() = %v, want the document refused for its chunks", err)
	}
	if _, err := Chunks(Document{Source: "fine.md", Content: strings.Repeat("# h\n\ntext\n\n", 1000)}, DefaultOptions()); err != nil {
		t.Errorf("a document of 1,000 sections: %v", err)
	}
}
