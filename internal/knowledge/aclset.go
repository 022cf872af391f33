package knowledge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// An ACL set is the distinct list of principals a chunk grants. Each row
// stores the id of its set (acl_set, INT64) beside the principals (acl),
// and the collection's properties hold the table id → principals, so the
// search filter is `acl_set in [ids]`: an INT64 filter that costs about
// nothing, where array_contains_any over the ARRAY field costs a scan
// (Milvus Lite indexes no ARRAY field; standalone Milvus can, but the INT64
// filter is as fast there too). Distinct sets are few: one per group of
// documents with the same readers.
//
// Deny by default holds: a principal that names no set allows no id, no
// id allows no row, and a row whose set the table does not hold (yet) is
// found by no one.

// aclSetsProperty on a generation's collection holds its ACL set table.
const aclSetsProperty = "ragroute.acl_sets"

// aclSets maps set ids to their principals (sorted, distinct).
type aclSets map[int64][]string

// canonicalACL is the set form of principals: sorted, without repeats.
func canonicalACL(principals []string) []string {
	out := slices.Clone(principals)
	slices.Sort(out)
	return slices.Compact(out)
}

// aclSetID is the set's id: derived from its principals alone, so every
// ingestion run and every replica agrees on it without coordination. A
// collision of two sets on one id is refused when the table is written.
func aclSetID(principals []string) int64 {
	sum := sha256.Sum256([]byte(strings.Join(canonicalACL(principals), "\x00")))
	return int64(binary.BigEndian.Uint64(sum[:8]) &^ (1 << 63)) // non-negative
}

// add records the sets of rows, refusing an id that already names another
// set; it reports whether the table grew.
func (t aclSets) add(rows []Row) (bool, error) {
	grew := false
	for _, r := range rows {
		set := canonicalACL(r.ACL)
		id := aclSetID(set)
		if have, ok := t[id]; ok {
			if !slices.Equal(have, set) {
				return false, fmt.Errorf("ACL sets %v and %v share id %d; refusing to mix their readers", have, set, id)
			}
			continue
		}
		t[id] = set
		grew = true
	}
	return grew, nil
}

// allowed are the ids of the sets that grant one of principals, sorted.
// Principals the filter could not quote safely are ignored, as in the
// array filter: failing closed.
func (t aclSets) allowed(principals []string) []int64 {
	mine := map[string]bool{}
	for _, p := range principals {
		if _, ok := quoteLiteral(p); ok {
			mine[p] = true
		}
	}
	var ids []int64
	for id, set := range t {
		if slices.ContainsFunc(set, func(p string) bool { return mine[p] }) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// marshal writes the table as the collection property's value.
func (t aclSets) marshal() (string, error) {
	byID := make(map[string][]string, len(t))
	for id, set := range t {
		byID[strconv.FormatInt(id, 10)] = set
	}
	data, err := json.Marshal(byID)
	if err != nil {
		return "", fmt.Errorf("marshal ACL sets: %w", err)
	}
	return string(data), nil
}

// parseACLSets reads the property's value; an empty value is an empty table.
func parseACLSets(value string) (aclSets, error) {
	t := aclSets{}
	if value == "" {
		return t, nil
	}
	var byID map[string][]string
	if err := json.Unmarshal([]byte(value), &byID); err != nil {
		return nil, fmt.Errorf("read ACL sets: %w", err)
	}
	for key, set := range byID {
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil || id != aclSetID(set) {
			return nil, fmt.Errorf("read ACL sets: entry %q does not match its principals %v", key, set)
		}
		t[id] = canonicalACL(set)
	}
	return t, nil
}

// aclSetFilter keeps a search to the rows of the allowed sets, AND'ed
// with the route's own filter when it has one. No allowed set means
// nothing matches.
func aclSetFilter(allowed []int64, routeFilter string) string {
	filter := FieldID + ` == ""` // matches no chunk: ids are never empty
	if len(allowed) > 0 {
		ids := make([]string, len(allowed))
		for i, id := range allowed {
			ids[i] = strconv.FormatInt(id, 10)
		}
		filter = FieldACLSet + " in [" + strings.Join(ids, ", ") + "]"
	}
	if routeFilter = strings.TrimSpace(routeFilter); routeFilter != "" {
		filter = "(" + filter + ") and (" + routeFilter + ")"
	}
	return filter
}
