package controller

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// The ingestion's count of chunks embedded cut reaches the status, the
// Indexed condition says so while it is above 0, and a Warning event is
// emitted once per new count.
func TestStoreStatusReportsTruncatedChunks(t *testing.T) {
	facts := func(truncated *int64) storeFacts {
		return storeFacts{ingestion: true, job: &jobState{name: "docs-ingest-1"}, index: &knowledge.IndexState{Exists: true, Rows: 9,
			Generation: knowledge.Generation{Number: 2, Truncated: truncated}}}
	}
	status := &v1alpha1.KnowledgeStoreStatus{}
	recordIngestion(status, facts(ptr.To[int64](4)))
	if status.TruncatedChunks == nil || *status.TruncatedChunks != 4 {
		t.Fatalf("truncatedChunks %v, want 4", status.TruncatedChunks)
	}
	if msg := indexedCondition(facts(ptr.To[int64](4))).Message; !strings.Contains(msg, "4 chunks were over embedding.maxInputTokens") ||
		!strings.Contains(msg, "ingestion.chunking.maxTokens") {
		t.Errorf("Indexed does not report the truncation: %q", msg)
	}
	if msg := indexedCondition(facts(ptr.To[int64](0))).Message; strings.Contains(msg, "maxInputTokens") {
		t.Errorf("Indexed reports a truncation of 0: %q", msg)
	}
	recordIngestion(status, facts(nil))
	if status.TruncatedChunks != nil {
		t.Errorf("a generation that never counted shows %v", *status.TruncatedChunks)
	}

	recorder := events.NewFakeRecorder(10)
	store := &v1alpha1.KnowledgeStore{}
	recordTruncation(recorder, store, nil, ptr.To[int64](4))
	recordTruncation(recorder, store, ptr.To[int64](4), ptr.To[int64](4))
	recordTruncation(recorder, store, ptr.To[int64](4), ptr.To[int64](0))
	recordTruncation(recorder, store, nil, nil)
	if len(recorder.Events) != 1 {
		t.Fatalf("%d events, want 1 (for the new count only)", len(recorder.Events))
	}
	if e := <-recorder.Events; !strings.HasPrefix(e, "Warning ChunksTruncated") || !strings.Contains(e, "4 chunks") {
		t.Errorf("event %q", e)
	}
}

// The ingestion's count of refused documents reaches the status, the
// Indexed condition says so while it is above 0 (the store stays
// Indexed: the rest was ingested), and a Warning event is emitted once
// per new count.
func TestStoreStatusReportsRefusedDocuments(t *testing.T) {
	facts := func(refused *int64) storeFacts {
		return storeFacts{ingestion: true, job: &jobState{name: "docs-ingest-1"}, index: &knowledge.IndexState{Exists: true, Rows: 9,
			Generation: knowledge.Generation{Number: 2, Refused: refused}}}
	}
	status := &v1alpha1.KnowledgeStoreStatus{}
	recordIngestion(status, facts(ptr.To[int64](3)))
	if status.RefusedDocuments == nil || *status.RefusedDocuments != 3 {
		t.Fatalf("refusedDocuments %v, want 3", status.RefusedDocuments)
	}
	c := indexedCondition(facts(ptr.To[int64](3)))
	if c.Status != "True" || !strings.Contains(c.Message, "3 documents of the sources were refused and not ingested") ||
		!strings.Contains(c.Message, "the ingest Job's log names each and why") {
		t.Errorf("Indexed does not report the refusal: %+v", c)
	}
	if msg := indexedCondition(facts(ptr.To[int64](0))).Message; strings.Contains(msg, "refused") {
		t.Errorf("Indexed reports 0 refused documents: %q", msg)
	}
	recordIngestion(status, facts(nil))
	if status.RefusedDocuments != nil {
		t.Errorf("a generation that never counted shows %v", *status.RefusedDocuments)
	}

	recorder := events.NewFakeRecorder(10)
	store := &v1alpha1.KnowledgeStore{}
	recordRefusal(recorder, store, nil, ptr.To[int64](3))
	recordRefusal(recorder, store, ptr.To[int64](3), ptr.To[int64](3))
	recordRefusal(recorder, store, ptr.To[int64](3), ptr.To[int64](0))
	if len(recorder.Events) != 1 {
		t.Fatalf("%d events, want 1 (for the new count only)", len(recorder.Events))
	}
	if e := <-recorder.Events; !strings.HasPrefix(e, "Warning DocumentsRefused") || !strings.Contains(e, "3 documents") {
		t.Errorf("event %q", e)
	}
}
