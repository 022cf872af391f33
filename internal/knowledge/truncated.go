package knowledge

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// truncatedProperty on a generation's collection holds how many of its
// chunks had an embedded input cut to the embedder's limit, as the last
// ingestion counted them (ingestion's inputLimit): the operator shows it
// without a query.
const truncatedProperty = "ragroute.truncated"

// recordTruncated records collection's count of cut chunks.
func (s *Store) recordTruncated(ctx context.Context, collection string, n int64) error {
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(truncatedProperty, n)); err != nil {
		return fmt.Errorf("record the truncated chunks of %s: %w", collection, err)
	}
	return nil
}
