package controller

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// TestARefusedStoreShowsNothingOfTheCollection: a store whose alias
// serves another store's collection is refused, and its status says the
// collection is taken, but shows none of what that collection holds (rows,
// generation, embedder fingerprint and description, background, counts)
// nor who owns it, not even what an earlier status had recorded.
func TestARefusedStoreShowsNothingOfTheCollection(t *testing.T) {
	owned := knowledge.Generation{Number: 7, Collection: "docs_g7", Embedder: "fp-owner", Owner: "team-a/salaries",
		EmbedderInfo: &knowledge.EmbedderInfo{Model: "owner-model", Dimensions: 384},
		Background:   &knowledge.Background{Mean: 0.8, Samples: 100}, Flagged: ptr.To[int64](3), Truncated: ptr.To[int64](2)}
	f := storeFacts{uri: "http://milvus:19530", owner: "team-b/docs", version: "v2.6.0", ingestion: true, fingerprint: "fp-mine",
		index: &knowledge.IndexState{Exists: true, Rows: 4242, Generation: owned},
		job: &jobState{name: "docs-ingest-1", failed: true,
			message: (&knowledge.OwnerError{Collection: owned.Collection, Owner: owned.Owner, Want: "team-b/docs"}).Error()}}
	// What an operator before this fix recorded.
	status := &v1alpha1.KnowledgeStoreStatus{Rows: 4242, IndexGeneration: 7, EmbedderFingerprint: "fp-owner",
		FlaggedChunks: ptr.To[int64](3), TruncatedChunks: ptr.To[int64](2)}
	status.Conditions = storeConditions(f)
	recordIngestion(status, f)

	if status.Rows != 0 || status.IndexGeneration != 0 || status.EmbedderFingerprint != "" || status.IndexEmbedder != nil ||
		status.Background != nil || status.FlaggedChunks != nil || status.TruncatedChunks != nil {
		t.Errorf("the refused store's status shows the other collection: %+v", status)
	}
	var texts []string
	for _, c := range status.Conditions {
		texts = append(texts, c.Type+": "+c.Message)
		if c.Type == v1alpha1.ConditionSchemaReady && (c.Reason != v1alpha1.ReasonCollectionOwnedByAnotherStore || !strings.Contains(c.Message, "taken")) {
			t.Errorf("SchemaReady %s: %q, want %s saying the collection is taken", c.Reason, c.Message, v1alpha1.ReasonCollectionOwnedByAnotherStore)
		}
	}
	if status.LastIngestion != nil {
		texts = append(texts, "lastIngestion: "+status.LastIngestion.Message)
	}
	for _, text := range texts {
		for _, secret := range []string{"team-a", "salaries", "docs_g7", "4242", "generation 7", "fp-owner", "owner-model"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q names %q of the other store", text, secret)
			}
		}
	}
}
