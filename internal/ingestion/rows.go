package ingestion

import (
	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// RowFromChunk is the stored form of a chunk, vectors still to come. It
// lives here, between the chunker and the store, so neither knows the other.
// Its units are cut by the grounding check's own rule (answer.FragmentUnits),
// so that a route finds their stored vectors.
func RowFromChunk(ch ingest.Chunk) knowledge.Row {
	return knowledge.Row{
		ID: ch.ID, DocID: ch.DocID, Source: ch.Source, SourceURI: ch.URI, Title: ch.Title,
		HeadingPath: ch.HeadingPath, ChunkType: string(ch.Type), Kind: string(ch.Kind),
		PartIndex: int64(ch.PartIndex), PartCount: int64(ch.PartCount), ParentID: ch.ParentID,
		ImageURLs: ch.ImageURLs, ACL: ch.ACL, ContentHash: ch.ContentHash, Text: ch.Text, Flagged: ch.Flagged,
		Units: answer.FragmentUnits(ch.Text),
	}
}
