package ingest

import (
	"os"
	"testing"
)

// FuzzChunks: on any input the chunker does not panic, and every chunk
// keeps the invariants. Run longer with
// go test ./internal/ingest -run '^$' -fuzz FuzzChunks -fuzztime 60s
func FuzzChunks(f *testing.F) {
	paths, _ := fixtures()
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("---\nacl: [group:a]\n---\n```\n# not a heading\n")
	f.Add("# a\n### b\n## c\n#\n####### seven\n\t# tab")
	f.Add("| a |\n|---|\n" + string(make([]byte, 300)))
	f.Add("---\ntitle: T\n---\n## H {#h .c k=v}\n{{< tabpane >}} {{% tab \"a %}}\n{{< comment >}}\n# x\n{{% param %}}{{</* y */>}}\n{{< /comment")
	opts := Options{MaxTokens: 40, OverlapTokens: 6, MergeBelowTokens: 12, FrontMatterKey: "acl", Tokens: DefaultOptions().Tokens}
	f.Fuzz(func(t *testing.T, content string) {
		doc := Document{Source: "fuzz.md", Content: content}
		chunks, err := Chunks(doc, opts)
		if err != nil {
			return // front matter refused, with a message: fine
		}
		checkInvariants(t, doc, opts, chunks)
	})
}

// BenchmarkChunkCorpus reports Markdown throughput (MB/s, one core) over
// the eval corpus with the default options.
func BenchmarkChunkCorpus(b *testing.B) {
	docs := corpusDocuments(b)
	size := 0
	for _, d := range docs {
		size += len(d.Content)
	}
	opts := DefaultOptions()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			if _, err := Chunks(d, opts); err != nil {
				b.Fatal(err)
			}
		}
	}
}
