package controller

import (
	"errors"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// The status counts the serving generation's flagged chunks once an
// ingestion recorded them, and keeps the count while Milvus is unreadable.
func TestStoreStatusCountsFlaggedChunks(t *testing.T) {
	status := &v1alpha1.KnowledgeStoreStatus{}
	recordIngestion(status, storeFacts{index: &knowledge.IndexState{Exists: true, Rows: 9,
		Generation: knowledge.Generation{Number: 2, Flagged: ptr.To[int64](3)}}})
	if status.FlaggedChunks == nil || *status.FlaggedChunks != 3 {
		t.Fatalf("flaggedChunks %v, want 3", status.FlaggedChunks)
	}
	recordIngestion(status, storeFacts{probeErr: errors.New("unreachable")})
	if status.FlaggedChunks == nil || *status.FlaggedChunks != 3 {
		t.Errorf("an unreadable index changed the count to %v", status.FlaggedChunks)
	}
	recordIngestion(status, storeFacts{index: &knowledge.IndexState{Exists: true, Rows: 9,
		Generation: knowledge.Generation{Number: 3, Flagged: ptr.To[int64](0)}}})
	if status.FlaggedChunks == nil || *status.FlaggedChunks != 0 {
		t.Errorf("flaggedChunks %v, want 0 shown as 0", status.FlaggedChunks)
	}
	recordIngestion(status, storeFacts{index: &knowledge.IndexState{Exists: true, Rows: 9, Generation: knowledge.Generation{Number: 1}}})
	if status.FlaggedChunks != nil {
		t.Errorf("a generation that never counted shows %v", *status.FlaggedChunks)
	}
}
