package knowledge

import (
	"context"
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// flaggedProperty on a generation's collection holds how many of its
// chunks are flagged as reading like instructions to a model, as the last
// ingestion counted them: the operator shows it without a query.
const flaggedProperty = "ragroute.flagged"

// recordFlagged counts collection's flagged chunks and records the count.
func (s *Store) recordFlagged(ctx context.Context, collection string) (int64, error) {
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(collection).WithOutputFields("count(*)").
		WithFilter(FieldFlagged+` != ""`).WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return 0, fmt.Errorf("count flagged chunks of %s: %w", collection, err)
	}
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	if err != nil {
		return 0, fmt.Errorf("count flagged chunks of %s: %w", collection, err)
	}
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(flaggedProperty, n)); err != nil {
		return 0, fmt.Errorf("record the flagged chunks of %s: %w", collection, err)
	}
	return n, nil
}

// parseCount reads a count property (flagged, truncated); nil when none
// is recorded (a generation of an older schema, or one never ingested
// into).
func parseCount(value string) *int64 {
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 {
		return nil
	}
	return &n
}
