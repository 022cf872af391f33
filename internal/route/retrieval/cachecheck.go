package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/keyhash"
)

// The exact cache is keyed on the query, the principals and the index
// generation, but a sync within one generation (a document deleted, an ACL
// narrowed in its front matter) changes no key. So a hit is served only
// after one cheap read under the caller's ACL filter shows that every
// cached fragment is still there, readable by the caller, with the same
// content hash: what the store no longer serves to this caller is never
// served from the cache either, from the moment the sync lands.

// partsVersion is a reassembled section's version: its parts' ids and
// content hashes, in order.
func partsVersion(parts []knowledge.RowVersion) string {
	h := sha256.New()
	for _, p := range parts {
		keyhash.Field(h, p.ID)
		keyhash.Field(h, p.ContentHash)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// rowVersion is a row's RowVersion.
func rowVersion(r knowledge.Row) knowledge.RowVersion {
	return knowledge.RowVersion{ID: r.ID, ParentID: r.ParentID, PartIndex: r.PartIndex, ContentHash: r.ContentHash}
}

// stillServed reports whether the store serves every fragment to
// principals as it was cached; an error reading it counts as no. Its wait
// for a store slot is added to *queued.
func (s *Searcher) stillServed(ctx context.Context, fragments []Fragment, principals []string, queued *time.Duration) bool {
	ids, parents := RowIDs(fragments)
	if len(ids)+len(parents) == 0 {
		return true
	}
	current, err := storeStep(ctx, s, "cache check", queued, func(ctx context.Context) ([]knowledge.RowVersion, error) {
		return s.Index.Current(ctx, ids, parents, principals)
	})
	if err != nil {
		return false
	}
	rows := map[string]string{}
	sections := map[string][]knowledge.RowVersion{}
	for _, r := range current {
		rows[r.ID] = r.ContentHash
		if r.ParentID != "" {
			sections[r.ParentID] = append(sections[r.ParentID], r)
		}
	}
	for _, f := range fragments {
		want := rows[f.ID]
		if f.Reassembled {
			parts := sections[f.ID]
			slices.SortFunc(parts, func(a, b knowledge.RowVersion) int { return int(a.PartIndex - b.PartIndex) })
			want = ""
			if len(parts) > 0 {
				want = partsVersion(parts)
			}
		}
		if want == "" || want != f.Version {
			return false
		}
	}
	return true
}
