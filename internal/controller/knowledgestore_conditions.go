package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

// storeCheck is what one KnowledgeStore reconcile found.
type storeCheck struct {
	uri      string
	refErr   *referenceError // a Secret reference is broken; Milvus was not tried
	probeErr error           // Milvus did not answer
	version  string          // Milvus' version when it answered

	ingestion   bool                  // the store declares sources
	ingestErr   *referenceError       // the ingestion cannot run (missing source, git source)
	fingerprint string                // of the embedder the spec names
	job         *jobState             // the current ingestion Job, once it exists
	index       *knowledge.IndexState // what the alias serves, once read
}

func (c storeCheck) connected() bool { return c.refErr == nil && c.probeErr == nil }

// storeConditions derives, in order: Connected, SchemaReady, Indexed,
// Ready. A store with sources is Ready once a generation serves its alias:
// a later re-ingestion, running or failed, never takes a working index
// away from routes.
func storeConditions(c storeCheck) []metav1.Condition {
	conditions := []metav1.Condition{connectedCondition(c)}
	if c.ingestion {
		conditions = append(conditions, schemaReadyCondition(c), indexedCondition(c))
	}
	return append(conditions, storeReadyCondition(c, conditions))
}

func connectedCondition(c storeCheck) metav1.Condition {
	switch {
	case c.refErr != nil:
		return metav1.Condition{Type: v1alpha1.ConditionConnected, Status: metav1.ConditionUnknown,
			Reason: c.refErr.Reason, Message: "not checked: " + c.refErr.Message}
	case c.probeErr != nil:
		return condition(v1alpha1.ConditionConnected, false, v1alpha1.ReasonMilvusUnreachable, c.probeErr.Error())
	}
	return condition(v1alpha1.ConditionConnected, true, v1alpha1.ReasonConnected,
		fmt.Sprintf("Milvus %s at %s answered", c.version, c.uri))
}

func schemaReadyCondition(c storeCheck) metav1.Condition {
	switch {
	case c.index == nil:
		return metav1.Condition{Type: v1alpha1.ConditionSchemaReady, Status: metav1.ConditionUnknown,
			Reason: v1alpha1.ReasonMilvusUnreachable, Message: "the index could not be read"}
	case !c.index.Exists:
		return condition(v1alpha1.ConditionSchemaReady, false, v1alpha1.ReasonNoIndex,
			"no index generation serves the alias yet: waiting for the first ingestion")
	case c.index.SchemaErr != nil:
		return condition(v1alpha1.ConditionSchemaReady, false, v1alpha1.ReasonSchemaMismatch, c.index.SchemaErr.Error())
	}
	return condition(v1alpha1.ConditionSchemaReady, true, v1alpha1.ReasonSchemaReady,
		fmt.Sprintf("collection %s (generation %d) serves the alias", c.index.Generation.Collection, c.index.Generation.Number))
}

func indexedCondition(c storeCheck) metav1.Condition {
	serving := ""
	if c.index != nil && c.index.Exists {
		serving = fmt.Sprintf("; generation %d keeps serving", c.index.Generation.Number)
	}
	switch {
	case !c.connected():
		return metav1.Condition{Type: v1alpha1.ConditionIndexed, Status: metav1.ConditionUnknown,
			Reason: v1alpha1.ReasonMilvusUnreachable, Message: "Milvus could not be asked"}
	case c.ingestErr != nil:
		return condition(v1alpha1.ConditionIndexed, false, c.ingestErr.Reason, c.ingestErr.Message+serving)
	case c.job == nil:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionPending, "the ingestion Job is being created"+serving)
	case c.job.failed:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionFailed, c.job.message+serving)
	case c.job.running:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionRunning, "Job "+c.job.name+" is ingesting"+serving)
	case c.index == nil || !c.index.Exists || c.index.Generation.Embedder != c.fingerprint:
		return condition(v1alpha1.ConditionIndexed, false, v1alpha1.ReasonIngestionFailed,
			"Job "+c.job.name+" completed but no generation of the current embedder serves the alias")
	}
	return condition(v1alpha1.ConditionIndexed, true, v1alpha1.ReasonIndexed,
		fmt.Sprintf("%d chunks in generation %d, ingested by Job %s", c.index.Rows, c.index.Generation.Number, c.job.name))
}

func storeReadyCondition(c storeCheck, before []metav1.Condition) metav1.Condition {
	switch {
	case c.refErr != nil:
		return condition(v1alpha1.ConditionReady, false, c.refErr.Reason, c.refErr.Message)
	case c.probeErr != nil:
		return condition(v1alpha1.ConditionReady, false, v1alpha1.ReasonMilvusUnreachable,
			"Milvus at "+c.uri+" is unreachable: "+c.probeErr.Error())
	}
	for _, cond := range before {
		if cond.Type == v1alpha1.ConditionSchemaReady && cond.Status != metav1.ConditionTrue {
			return condition(v1alpha1.ConditionReady, false, cond.Reason, cond.Message)
		}
	}
	if c.ingestion {
		return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonSchemaReady, "an index generation serves the alias")
	}
	return condition(v1alpha1.ConditionReady, true, v1alpha1.ReasonConnected, "Milvus at "+c.uri+" answered; no ingestion is declared")
}

// recordIngestion copies what the index and the Job say into the status.
func recordIngestion(status *v1alpha1.KnowledgeStoreStatus, c storeCheck) {
	if c.index != nil && c.index.Exists {
		status.Rows = c.index.Rows
		status.IndexGeneration = c.index.Generation.Number
		status.EmbedderFingerprint = c.index.Generation.Embedder
	}
	if j := c.job; j != nil {
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

func truncateMessage(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
