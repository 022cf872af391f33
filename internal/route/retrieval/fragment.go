package retrieval

import (
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Fragment is one retrieved piece of knowledge as a turn uses it.
type Fragment struct {
	// Marker is the citation marker, S1…, set when fragments are packed.
	Marker      string   `json:"marker,omitempty"`
	ID          string   `json:"id"`
	DocID       string   `json:"doc_id"`
	Source      string   `json:"source"`
	SourceURI   string   `json:"source_uri"`
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	Kind        string   `json:"kind"`
	ImageURLs   []string `json:"image_urls"`
	Text        string   `json:"-"`
	// Score ranks the fragment: its Similarity, or the cross-encoder's
	// relevance once one rescored it. The strict floor applies to it.
	Score float64 `json:"score"`
	// Similarity is the cosine of the question to the fragment's text or
	// title by the store's embedder (the closer), in every rerank mode:
	// the settings documented as cosines (similarity floor, diversity
	// margin, researchBelow) compare it, never a relevance.
	Similarity float64 `json:"similarity"`
	// Reassembled is true when the fragment is a split section put back
	// together from its parts.
	Reassembled bool `json:"reassembled,omitempty"`
	// Flagged says why the fragment reads as instructions to a model, as
	// ingestion judged it; empty for ordinary documentation. A route keeps,
	// drops or quarantines flagged fragments (its flaggedFragments policy).
	Flagged   string `json:"flagged,omitempty"`
	ParentID  string `json:"-"`
	PartCount int    `json:"-"`
	// Version is the content hash of the row the fragment came from (of
	// its parts, for a reassembled section): a cache hit is served only
	// while the store still serves that version (stillServed).
	Version string `json:"-"`
}

// fragmentOf is row found at similarity, which also ranks it until a
// reranker rescores it.
func fragmentOf(row knowledge.Row, similarity float64) Fragment {
	return Fragment{
		ID: row.ID, DocID: row.DocID, Source: row.Source, SourceURI: row.SourceURI, Title: row.Title,
		HeadingPath: row.HeadingPath, Kind: row.Kind, ImageURLs: row.ImageURLs, Text: row.Text,
		Score: similarity, Similarity: similarity, Flagged: row.Flagged, ParentID: row.ParentID, PartCount: int(row.PartCount),
		Version: row.ContentHash,
	}
}

// RowIDs are the store's ids of fragments: a fragment's own id, or,
// for a split section put back together, the parent id its parts share.
func RowIDs(fragments []Fragment) (ids, parentIDs []string) {
	for _, f := range fragments {
		if f.Reassembled {
			parentIDs = append(parentIDs, f.ID)
		} else {
			ids = append(ids, f.ID)
		}
	}
	return ids, parentIDs
}

// section names the section a fragment comes from: its parent for a part
// of a split section, else itself.
func (f Fragment) section() string {
	if f.PartCount > 1 && f.ParentID != "" {
		return f.ParentID
	}
	return f.ID
}

// Label is "title › heading path", the fragment's name in fences and
// citations, without the document's top heading when it only repeats the
// title.
func (f Fragment) Label() string {
	path := f.HeadingPath
	if len(path) > 0 && strings.EqualFold(strings.TrimSpace(path[0]), strings.TrimSpace(f.Title)) {
		path = path[1:]
	}
	return strings.Join(append([]string{f.Title}, path...), " › ")
}
