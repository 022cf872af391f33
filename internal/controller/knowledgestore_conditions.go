package controller

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// storeFacts is what a store reconcile found, reduced to what its
// conditions, status and next check depend on.
type storeFacts struct {
	uri      string
	owner    string // what the store records on its collections (collectionOwner)
	database string
	refErr   *referenceError // a Secret reference is broken; Milvus was not tried
	probeErr error           // Milvus did not answer
	version  string          // Milvus' version when it answered

	ingestion   bool                  // the store declares sources
	ingestErr   *referenceError       // the ingestion cannot run (missing source, config not rendered, child not the store's)
	applyErr    error                 // the API server refused the ingest ConfigMap, Job or CronJob
	fingerprint string                // of the embedder the spec names
	analyzer    string                // ID of the keyword analyzer the spec names
	job         *jobState             // the current ingestion Job, once it exists
	index       *knowledge.IndexState // what the alias serves, once read
	taken       bool                  // the alias serves another store's collection (ownIndex)
}

// ownIndex is f with the index left out when the alias serves a
// collection another store owns: its rows, generation, embedder and owner
// are another tenant's and reach neither this store's status nor its
// messages; only that the collection is taken does (taken).
func (f storeFacts) ownIndex() storeFacts {
	if f.index != nil && f.index.Exists && f.index.Generation.Owner != "" && f.index.Generation.Owner != f.owner {
		f.index, f.taken = &knowledge.IndexState{}, true
	}
	return f
}

// jobState is what the current ingestion Job reports.
type jobState struct {
	name     string
	running  bool
	failed   bool
	timedOut bool // failed: it ran past its activeDeadlineSeconds
	message  string
	finished *metav1.Time
}

func (f storeFacts) connected() bool { return f.refErr == nil && f.probeErr == nil }

// recheckAfter is when the store is checked again: recheck once Milvus
// answered, retry while it does not or while a Job runs (the index changes
// when it ends).
func (f storeFacts) recheckAfter(recheck, retry time.Duration) time.Duration {
	if f.connected() && (f.job == nil || !f.job.running) {
		return recheck
	}
	return retry
}

// storeConditions derives, in order: Connected, SchemaReady, Indexed,
// Ready. A store with sources is Ready once a generation serves its alias:
// a later re-ingestion, running or failed, never takes a working index
// away from routes.
func storeConditions(f storeFacts) []metav1.Condition {
	f = f.ownIndex()
	conditions := []metav1.Condition{connectedCondition(f)}
	if f.ingestion {
		conditions = append(conditions, schemaReadyCondition(f), indexedCondition(f))
	}
	return append(conditions, storeReadyCondition(f, conditions))
}

func connectedCondition(f storeFacts) metav1.Condition {
	switch {
	case f.refErr != nil:
		return metav1.Condition{Type: v1alpha1.ConditionConnected, Status: metav1.ConditionUnknown,
			Reason: f.refErr.Reason, Message: "not checked: " + f.refErr.Message}
	case f.probeErr != nil:
		return condition(v1alpha1.ConditionConnected, false, v1alpha1.ReasonMilvusUnreachable, milvusProblem(f.probeErr, f.uri, f.database))
	}
	return condition(v1alpha1.ConditionConnected, true, v1alpha1.ReasonConnected,
		fmt.Sprintf("Milvus %s at %s answered", f.version, f.uri))
}

func schemaReadyCondition(f storeFacts) metav1.Condition {
	switch {
	case f.taken:
		return condition(v1alpha1.ConditionSchemaReady, false, v1alpha1.ReasonCollectionOwnedByAnotherStore,
			(&knowledge.OwnerError{Want: f.owner}).Error())
	case f.index == nil:
		return metav1.Condition{Type: v1alpha1.ConditionSchemaReady, Status: metav1.ConditionUnknown,
			Reason: v1alpha1.ReasonMilvusUnreachable, Message: "the index could not be read"}
	case !f.index.Exists:
		return condition(v1alpha1.ConditionSchemaReady, false, v1alpha1.ReasonNoIndex,
			"no index generation serves the alias yet: waiting for the first ingestion")
	case f.index.SchemaErr != nil:
		return condition(v1alpha1.ConditionSchemaReady, false, v1alpha1.ReasonSchemaMismatch, f.index.SchemaErr.Error())
	}
	return condition(v1alpha1.ConditionSchemaReady, true, v1alpha1.ReasonSchemaReady,
		fmt.Sprintf("collection %s (generation %d) serves the alias", f.index.Generation.Collection, f.index.Generation.Number))
}

func indexedCondition(f storeFacts) metav1.Condition {
	serving := ""
	if f.index != nil && f.index.Exists {
		serving = fmt.Sprintf("; generation %d keeps serving", f.index.Generation.Number)
	}
	switch {
	case !f.connected():
		return metav1.Condition{Type: v1alpha1.ConditionIndexed, Status: metav1.ConditionUnknown,
			Reason: v1alpha1.ReasonMilvusUnreachable, Message: "Milvus could not be asked"}
	case f.ingestErr != nil:
		return condition(v1alpha1.ConditionIndexed, false, f.ingestErr.Reason, f.ingestErr.Message+serving)
	case f.applyErr != nil:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonApplyFailed, f.applyErr.Error()+serving)
	case f.job == nil:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionPending, "the ingestion Job is being created"+serving)
	case f.job.failed && f.job.timedOut:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionTimedOut, f.job.message+serving)
	case f.job.failed:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionFailed, f.job.message+serving)
	case f.job.running:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionRunning, "Job "+f.job.name+" is ingesting"+serving)
	case f.index == nil || !f.index.Exists || f.index.Generation.Embedder != f.fingerprint:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionFailed,
			"Job "+f.job.name+" completed but no generation of the current embedder serves the alias")
	case f.index.Generation.Analyzer != f.analyzer:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionFailed,
			"Job "+f.job.name+" completed but no generation of the current keyword analyzer ("+f.analyzer+") serves the alias")
	}
	message := fmt.Sprintf("%d chunks in generation %d, ingested by Job %s", f.index.Rows, f.index.Generation.Number, f.job.name)
	if n := f.index.Generation.Truncated; n != nil && *n > 0 {
		message += "; " + truncatedProblem(*n)
	}
	if n := f.index.Generation.Refused; n != nil && *n > 0 {
		message += "; " + refusedProblem(*n)
	}
	return condition(v1alpha1.ConditionIndexed, true, v1alpha1.ReasonIndexed, message)
}

// truncatedProblem says that n chunks were embedded cut, and what to do.
func truncatedProblem(n int64) string {
	return fmt.Sprintf("%d chunks were over embedding.maxInputTokens (less its %d%% margin) with their title path and were embedded cut "+
		"(status.truncatedChunks): lower ingestion.chunking.maxTokens or shorten their headings", n, tokenize.InputMarginPercent)
}

// refusedProblem says that n documents were refused, and where to read
// which.
func refusedProblem(n int64) string {
	return fmt.Sprintf("%d documents of the sources were refused and not ingested (status.refusedDocuments): "+
		"the ingest Job's log names each and why", n)
}

func storeReadyCondition(f storeFacts, before []metav1.Condition) metav1.Condition {
	switch {
	case f.refErr != nil:
		return condition(v1alpha1.ConditionReady, false, f.refErr.Reason, f.refErr.Message)
	case f.probeErr != nil:
		return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonMilvusUnreachable, milvusProblem(f.probeErr, f.uri, f.database))
	}
	for _, cond := range before {
		if cond.Type == v1alpha1.ConditionSchemaReady && cond.Status != metav1.ConditionTrue {
			return condition(v1alpha1.ConditionReady, false, cond.Reason, cond.Message)
		}
	}
	if f.ingestion {
		return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonSchemaReady, "an index generation serves the alias")
	}
	return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonConnected, "Milvus at "+f.uri+" answered; no ingestion is declared")
}

// recordIngestion copies what the index and the Job say into the status.
// Without them (e.g. Milvus unreachable) the status keeps what it said.
func recordIngestion(status *v1alpha1.KnowledgeStoreStatus, f storeFacts) {
	if f = f.ownIndex(); f.taken {
		// What an earlier status said of that collection goes too.
		status.Rows, status.IndexGeneration, status.EmbedderFingerprint, status.IndexAnalyzer = 0, 0, "", ""
		status.IndexGroundingUnits = ""
		status.IndexEmbedder, status.Background, status.FlaggedChunks, status.TruncatedChunks = nil, nil, nil, nil
		status.RefusedDocuments = nil
	}
	if f.index != nil && f.index.Exists {
		status.Rows = f.index.Rows
		status.IndexGeneration = f.index.Generation.Number
		status.EmbedderFingerprint = f.index.Generation.Embedder
		status.IndexEmbedder = indexEmbedderStatus(f.index.Generation.EmbedderInfo)
		status.IndexAnalyzer = f.index.Generation.Analyzer
		status.IndexGroundingUnits = f.index.Generation.Units
		status.Background = backgroundStatus(f.index.Generation.Background)
		status.FlaggedChunks = nil
		if n := f.index.Generation.Flagged; n != nil {
			status.FlaggedChunks = ptr.To(*n)
		}
		status.TruncatedChunks = nil
		if n := f.index.Generation.Truncated; n != nil {
			status.TruncatedChunks = ptr.To(*n)
		}
		status.RefusedDocuments = nil
		if n := f.index.Generation.Refused; n != nil {
			status.RefusedDocuments = ptr.To(*n)
		}
	}
	if j := f.job; j != nil {
		record := &v1alpha1.IngestionRecord{Time: j.finished, Result: "Succeeded", Message: "Job " + j.name}
		switch {
		case j.running:
			record.Result, record.Message = "Running", "Job "+j.name+" is running"
		case j.failed:
			record.Result, record.Message = "Failed", truncateMessage(j.message)
		}
		status.LastIngestion = record
	}
}

// backgroundStatus is the serving generation's background similarity as
// the status shows it; nil when none is recorded.
func backgroundStatus(b *knowledge.Background) *v1alpha1.BackgroundSimilarity {
	if b == nil {
		return nil
	}
	return &v1alpha1.BackgroundSimilarity{Mean: b.Mean, StdDev: b.StdDev, P50: b.P50, P90: b.P90, P99: b.P99, Samples: int64(b.Samples)}
}
