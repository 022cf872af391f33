package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// RowVersion is what a reader needs to tell whether a row it holds is still
// the row the alias serves: its ids and its content hash (which covers
// its ACL and text).
type RowVersion struct {
	ID          string
	ParentID    string
	PartIndex   int64
	ContentHash string
}

// currentFields are the output fields of a Current read.
var currentFields = []string{FieldID, FieldParentID, FieldPartIndex, FieldContentHash}

// Current returns the versions of the rows principals may read now among
// ids and the parts of the split sections parentIDs, in one query under
// the same ACL filter as a search (shared with other turns' reads under
// that filter that wait meanwhile: coalesce.go). A row deleted, changed
// or no longer readable by principals is missing or has another hash: a
// cache uses it to drop what it holds the moment the store changes.
func (s *Store) Current(ctx context.Context, ids, parentIDs []string, principals []string) ([]RowVersion, error) {
	if len(ids)+len(parentIDs) == 0 {
		return nil, nil
	}
	if id, bad := unquotable(slices.Concat(ids, parentIDs)); bad {
		return nil, fmt.Errorf("current rows: bad id %q", id)
	}
	filter, err := s.readFilter(ctx, principals, "")
	if err != nil {
		return nil, fmt.Errorf("current rows: %w", err)
	}
	rows, err := s.current.do(ctx, filter, rowsAsked{ids: ids, parents: parentIDs})
	if err != nil {
		return nil, fmt.Errorf("current rows of %s: %w", s.alias, err)
	}
	return rows, nil
}

// rowsAsked is one Current read: rows by id, and split sections' parts.
type rowsAsked struct{ ids, parents []string }

// holds says whether r is one of the rows asked.
func (a rowsAsked) holds(r RowVersion) bool {
	return slices.Contains(a.ids, r.ID) || r.ParentID != "" && slices.Contains(a.parents, r.ParentID)
}

// currentCall is one query for the rows every read asks for, under their
// ACL filter; each read gets its own rows.
func (s *Store) currentCall(ctx context.Context, aclFilter string, reads []rowsAsked) ([][]RowVersion, error) {
	var all rowsAsked
	for _, r := range reads {
		all.ids, all.parents = append(all.ids, r.ids...), append(all.parents, r.parents...)
	}
	var clauses []string
	for _, in := range []struct {
		field  string
		values []string
	}{{FieldID, all.ids}, {FieldParentID, all.parents}} {
		if len(in.values) > 0 {
			clauses = append(clauses, in.field+" in ["+quotedList(in.values)+"]")
		}
	}
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(s.alias).
		WithFilter("("+aclFilter+") and ("+strings.Join(clauses, " || ")+")").
		WithOutputFields(currentFields...).WithLimit(maxPartsQuery*len(reads)))
	if err != nil {
		return nil, err
	}
	versions := make([]RowVersion, rs.ResultCount)
	for i := range versions {
		var errs [4]error
		versions[i].ID, errs[0] = rs.GetColumn(FieldID).GetAsString(i)
		versions[i].ParentID, errs[1] = rs.GetColumn(FieldParentID).GetAsString(i)
		versions[i].PartIndex, errs[2] = rs.GetColumn(FieldPartIndex).GetAsInt64(i)
		versions[i].ContentHash, errs[3] = rs.GetColumn(FieldContentHash).GetAsString(i)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, err
		}
	}
	out := make([][]RowVersion, len(reads))
	for i, r := range reads {
		for _, v := range versions {
			if r.holds(v) {
				out[i] = append(out[i], v)
			}
		}
	}
	return out, nil
}
