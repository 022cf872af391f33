package knowledge

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// aclTableMaxAge is how long a reader trusts the ACL set table it read. A
// set added since is found by no one until then (failing closed); an id
// never changes meaning, so a stale table never widens what anyone sees.
const aclTableMaxAge = 5 * time.Second

// aclCache is the ACL set table of the collection the alias serves.
type aclCache struct {
	mu   sync.Mutex
	read time.Time
	sets aclSets
	// legacy: the served collection predates acl_set, so searches filter
	// on the ACL array until the next ingestion builds a new generation.
	legacy bool
	// flagged: the served collection has the flagged field (schema 4 on).
	flagged bool
	// lexical: the served collection's BM25 reads analyzed text (schema 5
	// on), so queries are analyzed too (lexicalQuery).
	lexical bool
	// units: the served collection's rows hold their units' vectors
	// (schema 6 on, written by an ingestion with a unit embedder).
	units bool
}

// readFilter is the filter a read of the alias runs under: the caller's
// ACL sets, AND'ed with the route's filter.
func (s *Store) readFilter(ctx context.Context, principals []string, routeFilter string) (string, error) {
	sets, legacy, err := s.aclTable(ctx)
	if err != nil {
		return "", err
	}
	if legacy {
		return aclFilter(principals, routeFilter), nil
	}
	return aclSetFilter(sets.allowed(principals), routeFilter), nil
}

// aclTable returns the served collection's ACL sets, read again when the
// copy is older than aclTableMaxAge.
func (s *Store) aclTable(ctx context.Context) (aclSets, bool, error) {
	c := s.acl
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.read) < aclTableMaxAge {
		return c.sets, c.legacy, nil
	}
	alias, err := s.client.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption(s.alias))
	if err != nil {
		return nil, false, fmt.Errorf("describe alias %s: %w", s.alias, err)
	}
	coll, err := s.client.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(alias.CollectionName))
	if err != nil {
		return nil, false, fmt.Errorf("describe collection %s: %w", alias.CollectionName, err)
	}
	// Every read checks the owner here, with the table it reads anyway: a
	// route never serves another store's collection.
	if err := s.checkOwner(coll.Name, coll.Properties[ownerProperty]); err != nil {
		return nil, false, err
	}
	sets, err := parseACLSets(coll.Properties[aclSetsProperty])
	if err != nil {
		return nil, false, fmt.Errorf("collection %s: %w", coll.Name, err)
	}
	c.legacy, c.flagged, c.lexical, c.units = true, false, false, false
	for _, f := range coll.Schema.Fields {
		switch f.Name {
		case FieldACLSet:
			c.legacy = false
		case FieldFlagged:
			c.flagged = true
		case FieldTextLexical:
			c.lexical = true
		case FieldUnitVectors:
			c.units = coll.Properties[unitsProperty] != ""
		}
	}
	c.sets, c.read = sets, time.Now()
	return c.sets, c.legacy, nil
}

// servesUnits says the served collection's rows hold their units'
// vectors, as the latest aclTable read it.
func (s *Store) servesUnits() bool {
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	return s.acl.units
}

// servedFields are the output fields of a read of the alias: outputFields,
// and flagged when the served collection has it. A read calls readFilter
// first, which keeps what it knows of the collection fresh.
func (s *Store) servedFields() []string {
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	if s.acl.flagged {
		return append(slices.Clone(outputFields), FieldFlagged)
	}
	return slices.Clone(outputFields)
}

// aclSetsOf reads collection's ACL set table, which a sync then extends
// batch by batch (recordACLSets).
func (s *Store) aclSetsOf(ctx context.Context, collection string) (aclSets, error) {
	coll, err := s.client.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(collection))
	if err != nil {
		return nil, fmt.Errorf("describe collection %s: %w", collection, err)
	}
	sets, err := parseACLSets(coll.Properties[aclSetsProperty])
	if err != nil {
		return nil, fmt.Errorf("collection %s: %w", collection, err)
	}
	return sets, nil
}

// recordACLSets adds the sets of rows to sets, collection's table, and
// records the table when it grew: before the rows are written.
func (s *Store) recordACLSets(ctx context.Context, collection string, sets aclSets, rows []Row) error {
	grew, err := sets.add(rows)
	if err != nil || !grew {
		return err
	}
	value, err := sets.marshal()
	if err != nil {
		return err
	}
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(aclSetsProperty, value)); err != nil {
		return fmt.Errorf("record ACL sets of %s: %w", collection, err)
	}
	s.forgetACLTable()
	return nil
}

// forgetACLTable makes the next read fetch the table again.
func (s *Store) forgetACLTable() {
	s.acl.mu.Lock()
	s.acl.read = time.Time{}
	s.acl.mu.Unlock()
}
