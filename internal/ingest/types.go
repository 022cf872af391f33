package ingest

import (
	"errors"
	"fmt"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// ChunkType says where a chunk came from in the heading tree.
type ChunkType string

// Chunk types.
const (
	TypeSection    ChunkType = "section"    // a top-level section
	TypeSubsection ChunkType = "subsection" // a nested section, with its parents' heading path
	TypeMerged     ChunkType = "merged"     // a section with short subsections merged in
	TypeOrphan     ChunkType = "orphan"     // text under no heading
)

// Kind says what a chunk describes.
type Kind string

// Chunk kinds.
const (
	KindProse  Kind = "prose"  // concepts, how and why
	KindScreen Kind = "screen" // a UI screen: its fields, buttons, menus
)

// MaxDocumentBytes bounds one Markdown file: a source refuses a larger
// one, naming it, rather than read it into memory.
const MaxDocumentBytes = 8 << 20

// Limits every chunk holds: the knowledge store's schema refuses a longer
// title, heading or text, and one refused row would stop a store's whole
// ingestion. Titles and headings are cut to them (by bytes, between
// characters), texts split.
const (
	MaxTitleBytes   = 1024
	MaxHeadingBytes = 512
	MaxTextBytes    = 65535
)

// MaxChunksPerDocument bounds one document's chunks: a larger document
// is refused (8 MiB of one-line sections would otherwise make 1.4 M
// chunks, and their vectors GiBs). It is a document of the largest size
// cut every 512 bytes; the default 200-token chunks are about 1 KB.
const MaxChunksPerDocument = MaxDocumentBytes / 512

// Document is one Markdown file.
type Document struct {
	// Source is the document's path within its source, e.g. user-guide/helm.md.
	Source string
	// URI is where a reader can open the document; Source when empty.
	URI string
	// Principals may read the document unless its front matter names its own.
	Principals []string
	Content    string
}

// Chunk is one searchable unit of a document.
type Chunk struct {
	ID          string    `json:"id"`
	DocID       string    `json:"doc_id"`
	Source      string    `json:"source"`
	URI         string    `json:"source_uri"`
	Title       string    `json:"title"`
	HeadingPath []string  `json:"heading_path"`
	Type        ChunkType `json:"type"`
	Kind        Kind      `json:"kind"`
	// PartIndex (1-based) and PartCount are 1 and 1 for an unsplit chunk.
	PartIndex int `json:"part_index"`
	PartCount int `json:"part_count"`
	// ParentID is the id of the section a part was split from; empty when unsplit.
	ParentID    string   `json:"parent_id"`
	Tokens      int      `json:"tokens"`
	ImageURLs   []string `json:"image_urls"`
	ACL         []string `json:"acl"`
	ContentHash string   `json:"content_hash"`
	Text        string   `json:"text"`
	// Flagged says why the text reads as instructions to a model (see
	// FlagReason); empty for ordinary documentation.
	Flagged string `json:"flagged,omitempty"`
}

// Options tune the chunker.
type Options struct {
	// MaxTokens is the largest chunk; larger sections are split into parts.
	MaxTokens int
	// OverlapTokens repeat between consecutive parts.
	OverlapTokens int
	// MergeBelowTokens merges a subsection this short into its parent.
	MergeBelowTokens int
	// FrontMatterKey is the front-matter field listing a document's principals.
	FrontMatterKey string
	// Tokens counts tokens as the embedder does.
	Tokens tokenize.Counter
}

// DefaultOptions are the KnowledgeStore defaults with the tokenizer of
// BERT-family embedders such as all-MiniLM-L6-v2.
func DefaultOptions() Options {
	return Options{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60, FrontMatterKey: "acl", Tokens: tokenize.NewBERTUncased()}
}

// Validate says what is wrong with the options, if anything.
func (o Options) Validate() error {
	var errs []error
	if o.MaxTokens < 16 {
		errs = append(errs, fmt.Errorf("maxTokens %d is below 16", o.MaxTokens))
	}
	if o.OverlapTokens < 0 || o.OverlapTokens*2 >= o.MaxTokens {
		errs = append(errs, fmt.Errorf("overlapTokens %d must be at least 0 and under half of maxTokens %d", o.OverlapTokens, o.MaxTokens))
	}
	if o.MergeBelowTokens < 0 {
		errs = append(errs, fmt.Errorf("mergeBelowTokens %d is negative", o.MergeBelowTokens))
	}
	if o.Tokens == nil {
		errs = append(errs, errors.New("no token counter"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chunking options: %w", err)
	}
	return nil
}
