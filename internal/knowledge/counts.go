package knowledge

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// Counts the last ingestion made of a generation, kept on its collection
// so the operator shows them without a query.
const (
	// truncatedProperty: how many of its chunks had an embedded input cut
	// to the embedder's limit (ingestion's inputLimit).
	truncatedProperty = "ragroute.truncated"
	// refusedProperty: how many documents of the sources were refused and
	// not ingested (a link out of the source, a file over the size limit,
	// a row the schema would refuse).
	refusedProperty = "ragroute.refused"
)

// recordCount records one of a collection's counts.
func (s *Store) recordCount(ctx context.Context, collection, property string, n int64) error {
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(property, n)); err != nil {
		return fmt.Errorf("record %s of %s: %w", property, collection, err)
	}
	return nil
}
