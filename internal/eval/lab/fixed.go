package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// fixedRows cuts a document into fixed-size windows of whole lines (size
// tokens, the next window starting overlap tokens back), ignoring its
// structure: the baseline.
func fixedRows(doc ingest.Document, size, overlap int, tokens tokenize.Counter) ([]knowledge.Row, error) {
	lines, _, err := ingest.LinePaths(doc.Content, "acl")
	if err != nil {
		return nil, err
	}
	counts := make([]int, len(lines))
	for i, l := range lines {
		counts[i] = tokens.Count(l)
	}
	docSum := sha256.Sum256([]byte(doc.Source))
	docID := hex.EncodeToString(docSum[:16])
	var rows []knowledge.Row
	for start := 0; start < len(lines); {
		end, used := start, 0
		for end < len(lines) && (end == start || used+counts[end] <= size) {
			used += counts[end]
			end++
		}
		text := strings.TrimSpace(strings.Join(lines[start:end], "\n"))
		if text != "" {
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s#%d", doc.Source, start)))
			id := hex.EncodeToString(sum[:16])
			textSum := sha256.Sum256([]byte(text))
			rows = append(rows, knowledge.Row{ID: id, DocID: docID, Source: doc.Source, SourceURI: doc.Source,
				Title: doc.Source, ChunkType: "fixed", Kind: "prose", PartIndex: 1, PartCount: 1, ACL: doc.Principals,
				ContentHash: hex.EncodeToString(textSum[:16]), Text: text})
		}
		if end >= len(lines) {
			break
		}
		// Step back overlap tokens, but always move forward.
		next, back := end, 0
		for next > start+1 && back < overlap {
			next--
			back += counts[next]
		}
		start = next
	}
	return rows, nil
}
