package knowledge

import (
	"context"
	"errors"
	"fmt"
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
// the same ACL filter as a search. A row deleted, changed or no longer
// readable by principals is missing or has another hash: a cache uses it
// to drop what it holds the moment the store changes.
func (s *Store) Current(ctx context.Context, ids, parentIDs []string, principals []string) ([]RowVersion, error) {
	var clauses []string
	for _, in := range []struct {
		field  string
		values []string
	}{{FieldID, ids}, {FieldParentID, parentIDs}} {
		if len(in.values) == 0 {
			continue
		}
		literals := make([]string, len(in.values))
		for i, v := range in.values {
			lit, ok := quoteLiteral(v)
			if !ok {
				return nil, fmt.Errorf("current rows: bad %s %q", in.field, v)
			}
			literals[i] = lit
		}
		clauses = append(clauses, in.field+" in ["+strings.Join(literals, ", ")+"]")
	}
	if len(clauses) == 0 {
		return nil, nil
	}
	filter, err := s.readFilter(ctx, principals, "("+strings.Join(clauses, " || ")+")")
	if err != nil {
		return nil, fmt.Errorf("current rows: %w", err)
	}
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(s.alias).
		WithFilter(filter).WithOutputFields(currentFields...).WithLimit(maxPartsQuery))
	if err != nil {
		return nil, fmt.Errorf("current rows of %s: %w", s.alias, err)
	}
	out := make([]RowVersion, rs.ResultCount)
	for i := range out {
		var errs [4]error
		out[i].ID, errs[0] = rs.GetColumn(FieldID).GetAsString(i)
		out[i].ParentID, errs[1] = rs.GetColumn(FieldParentID).GetAsString(i)
		out[i].PartIndex, errs[2] = rs.GetColumn(FieldPartIndex).GetAsInt64(i)
		out[i].ContentHash, errs[3] = rs.GetColumn(FieldContentHash).GetAsString(i)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, fmt.Errorf("current rows of %s: %w", s.alias, err)
		}
	}
	return out, nil
}
