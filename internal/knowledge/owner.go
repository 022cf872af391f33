package knowledge

import (
	"context"
	"errors"
	"fmt"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// ownerProperty on a generation's collection names the KnowledgeStore
// that owns it (namespace/name). Two stores that name the same uri,
// database and collection would otherwise sync over each other's rows and
// swap each other's alias: the first to record itself keeps it.
const ownerProperty = "ragroute.owner"

// OwnerError says that a collection belongs to another store.
type OwnerError struct {
	Collection string
	// Owner is the store recorded on the collection; Want the one asking.
	Owner, Want string
}

// Error says the collection is taken, but not by whom nor which
// generation it is: the message reaches the asking store's status and its
// ingestion Job, which another tenant may read.
func (e *OwnerError) Error() string {
	return fmt.Sprintf("the collection is taken: another KnowledgeStore owns it, not %s; two stores cannot share one Milvus collection: "+
		"give this store another spec.milvus.collection (or database)", e.Want)
}

// ErrOwnedByAnother matches an OwnerError with errors.Is.
var ErrOwnedByAnother = errors.New("collection owned by another KnowledgeStore")

// Is makes errors.Is(err, ErrOwnedByAnother) hold for an OwnerError.
func (e *OwnerError) Is(target error) bool { return target == ErrOwnedByAnother }

// WithOwner makes the store record owner (namespace/name of its
// KnowledgeStore) on the generations it creates or adopts, and refuse
// collections another owner recorded. Without an owner (a local run)
// nothing is recorded or checked.
func (s *Store) WithOwner(owner string) *Store {
	s.owner = owner
	return s
}

// checkOwner refuses a collection recorded as another store's; one with
// no owner recorded (made before owners were) is anyone's to adopt.
func (s *Store) checkOwner(collection, recorded string) error {
	if s.owner == "" || recorded == "" || recorded == s.owner {
		return nil
	}
	return &OwnerError{Collection: collection, Owner: recorded, Want: s.owner}
}

// adopt records this store as the owner of gen's collection when none is
// recorded yet, and refuses it when another store is.
func (s *Store) adopt(ctx context.Context, gen Generation) error {
	if err := s.checkOwner(gen.Collection, gen.Owner); err != nil || s.owner == "" || gen.Owner == s.owner {
		return err
	}
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(gen.Collection).
		WithProperty(ownerProperty, s.owner)); err != nil {
		return fmt.Errorf("record the owner of %s: %w", gen.Collection, err)
	}
	return nil
}
