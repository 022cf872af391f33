package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// reassemble replaces a part of a split section by the whole section, its
// parts in order with the overlap between them removed.
// All sections are fetched in one call (the reassemble step); its wait for
// a store slot is added to *queued.
func (s *Searcher) reassemble(ctx context.Context, fragments []Fragment, principals []string, queued *time.Duration) ([]Fragment, error) {
	var parents []string
	for _, f := range fragments {
		if f.PartCount > 1 && f.ParentID != "" && !slices.Contains(parents, f.ParentID) {
			parents = append(parents, f.ParentID)
		}
	}
	if len(parents) == 0 {
		return fragments, nil
	}
	sections, err := storeStep(ctx, s, "reassemble", queued, func(ctx context.Context) (map[string][]knowledge.Row, error) {
		return s.Index.Parts(ctx, parents, principals)
	})
	if err != nil {
		return nil, fmt.Errorf("reassemble %d sections: %w", len(parents), err)
	}
	for i, f := range fragments {
		if f.PartCount <= 1 || f.ParentID == "" {
			continue
		}
		parts := sections[f.ParentID]
		if len(parts) < 2 {
			continue
		}
		texts := make([]string, len(parts))
		versions := make([]knowledge.RowVersion, len(parts))
		for j, p := range parts {
			texts[j], versions[j] = p.Text, rowVersion(p)
			if fragments[i].Flagged == "" {
				// The whole section is packed: any part's flag is its flag.
				fragments[i].Flagged = p.Flagged
			}
		}
		fragments[i].Text = joinParts(texts)
		fragments[i].Reassembled = true
		fragments[i].ID = f.ParentID
		fragments[i].Version = partsVersion(versions)
	}
	return fragments, nil
}

// joinParts concatenates parts, dropping each part's leading overlap (the
// longest prefix that repeats the previous part's end).
func joinParts(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			p = strings.TrimLeft(p[overlapLen(parts[i-1], p):], " \n")
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

// overlapLen is the length of the longest prefix of next that is a suffix
// of prev, counted at word boundaries.
func overlapLen(prev, next string) int {
	best := 0
	for i := 1; i <= len(next) && i <= len(prev) && i <= 2000; i++ {
		if (i == len(next) || next[i] == ' ' || next[i] == '\n') && strings.HasSuffix(prev, next[:i]) {
			best = i
		}
	}
	return best
}
