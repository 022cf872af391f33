package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/sources"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// runChunk prints the chunks of Markdown files and folders as JSON lines,
// without touching Milvus, so an admin can preview and debug chunking. A
// chunk that reads as instructions to a model carries "flagged" and why;
// --flagged prints only those.
func runChunk(args []string, stdout, stderr io.Writer) int {
	opts := ingest.DefaultOptions()
	fs := flag.NewFlagSet("ragroute chunk", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: ragroute chunk [flags] PATH...\n\nPrints the chunks of Markdown files and folders as JSON lines.\n\nFlags:")
		fs.PrintDefaults()
	}
	tokenizer := fs.String("tokenizer", string(podconfig.TokenizerBERTUncased), "the store's spec.embedding.tokenizer, whose tokens the sizes count: bertUncased or xlmRoberta")
	fs.IntVar(&opts.MaxTokens, "max-tokens", opts.MaxTokens, "largest chunk, in the tokenizer's tokens")
	fs.IntVar(&opts.OverlapTokens, "overlap-tokens", opts.OverlapTokens, "tokens repeated between the parts of a split section")
	fs.IntVar(&opts.MergeBelowTokens, "merge-below-tokens", opts.MergeBelowTokens, "merge a subsection this short into its parent")
	fs.StringVar(&opts.FrontMatterKey, "front-matter-key", opts.FrontMatterKey, "front-matter field listing a document's principals")
	principals := fs.String("principals", "", "comma-separated principals of documents whose front matter names none")
	onlyFlagged := fs.Bool("flagged", false, "print only chunks flagged as reading like instructions to a model")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if err := podconfig.CheckTokenizer(podconfig.Tokenizer(*tokenizer)); err != nil {
		fmt.Fprintln(stderr, "ragroute chunk:", err)
		return 2
	}
	opts.Tokens, _ = tokenize.ForEmbedder(podconfig.Tokenizer(*tokenizer))
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(stderr, "ragroute chunk:", err)
		return 2
	}
	var defaults []string
	for _, p := range strings.Split(*principals, ",") {
		if p = strings.TrimSpace(p); p != "" {
			defaults = append(defaults, p)
		}
	}

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	failed := 0
	for _, path := range fs.Args() {
		read, err := sources.ReadMarkdown(path, "", defaults)
		if err != nil {
			fmt.Fprintln(stderr, "ragroute chunk:", err)
			failed++
			continue
		}
		for _, refused := range read.Refused {
			fmt.Fprintf(stderr, "ragroute chunk: %s: %v\n", path, refused)
			failed++
		}
		for _, doc := range read.Documents {
			chunks, err := ingest.Chunks(doc, opts)
			if err != nil {
				// One bad file must not hide the others: report it and go on.
				fmt.Fprintf(stderr, "ragroute chunk: %s: %v\n", path, err)
				failed++
				continue
			}
			for _, ch := range chunks {
				if *onlyFlagged && ch.Flagged == "" {
					continue
				}
				if err := enc.Encode(ch); err != nil {
					fmt.Fprintln(stderr, "ragroute chunk:", err)
					return 1
				}
			}
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}
