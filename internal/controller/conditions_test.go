package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
)

type wantCondition struct {
	status metav1.ConditionStatus
	reason string
}

func TestRouteConditions(t *testing.T) {
	missingStore := &referenceError{Reason: v1alpha1.ReasonKnowledgeStoreMissing, Message: `KnowledgeStore "docs" referenced by spec.knowledgeStoreRef not found`}
	rolled := &rolloutState{observedCurrent: true, updated: 2, ready: 2, available: 2}
	cases := []struct {
		name                         string
		facts                        routeFacts
		degraded, progressing, ready wantCondition
	}{
		{"broken reference before any deployment", routeFacts{refErr: missingStore, desired: 2},
			wantCondition{"True", v1alpha1.ReasonKnowledgeStoreMissing},
			wantCondition{"False", v1alpha1.ReasonKnowledgeStoreMissing},
			wantCondition{"False", v1alpha1.ReasonKnowledgeStoreMissing}},
		{"broken reference with pods serving the last config", routeFacts{refErr: missingStore, desired: 2, rollout: rolled},
			wantCondition{"True", v1alpha1.ReasonKnowledgeStoreMissing},
			wantCondition{"False", v1alpha1.ReasonKnowledgeStoreMissing},
			wantCondition{"False", v1alpha1.ReasonKnowledgeStoreMissing}},
		{"apply refused", routeFacts{applyErr: errors.New("quota exceeded"), desired: 2},
			wantCondition{"True", v1alpha1.ReasonApplyFailed},
			wantCondition{"False", v1alpha1.ReasonApplyFailed},
			wantCondition{"False", v1alpha1.ReasonApplyFailed}},
		{"deployment applied, not yet in the cache", routeFacts{desired: 2, applied: true},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"True", v1alpha1.ReasonRollingOut},
			wantCondition{"False", v1alpha1.ReasonNoReadyReplicas}},
		{"deployment not yet observed", routeFacts{desired: 2, rollout: &rolloutState{}},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"True", v1alpha1.ReasonRollingOut},
			wantCondition{"False", v1alpha1.ReasonNoReadyReplicas}},
		{"one of two replicas available", routeFacts{desired: 2, rollout: &rolloutState{observedCurrent: true, updated: 2, ready: 1, available: 1}},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"True", v1alpha1.ReasonRollingOut},
			wantCondition{"True", v1alpha1.ReasonAvailable}},
		{"old pods ready, new template not yet", routeFacts{desired: 2, rollout: &rolloutState{observedCurrent: true, updated: 0, ready: 2, available: 2}},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"True", v1alpha1.ReasonRollingOut},
			wantCondition{"False", v1alpha1.ReasonNoReadyReplicas}},
		{"new pods available, an old one still serving", routeFacts{desired: 2,
			rollout: &rolloutState{observedCurrent: true, updated: 2, ready: 3, available: 3, total: 3}},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"True", v1alpha1.ReasonRollingOut},
			wantCondition{"True", v1alpha1.ReasonAvailable}},
		{"rolled out", routeFacts{desired: 2, rollout: rolled},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"False", v1alpha1.ReasonRolledOut},
			wantCondition{"True", v1alpha1.ReasonAvailable}},
		{"scaled to zero", routeFacts{desired: 0, rollout: &rolloutState{observedCurrent: true}},
			wantCondition{"False", v1alpha1.ReasonReferencesResolved},
			wantCondition{"False", v1alpha1.ReasonRolledOut},
			wantCondition{"False", v1alpha1.ReasonScaledToZero}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := routeConditions(tc.facts)
			for i, want := range []wantCondition{tc.degraded, tc.progressing, tc.ready} {
				if got[i].Status != want.status || got[i].Reason != want.reason {
					t.Errorf("%s = %s/%s (%s), want %s/%s", got[i].Type, got[i].Status, got[i].Reason, got[i].Message, want.status, want.reason)
				}
			}
		})
	}
}

func TestInsecureAuthCondition(t *testing.T) {
	for _, tc := range []struct {
		anyCaller bool
		want      wantCondition
	}{
		{false, wantCondition{"False", v1alpha1.ReasonCallerAuthenticated}},
		{true, wantCondition{"True", v1alpha1.ReasonAnyCallerAllowed}},
	} {
		// Insecure auth is a warning, not a failure: the route still serves.
		got := routeConditions(routeFacts{desired: 1, anyCaller: tc.anyCaller,
			rollout: &rolloutState{observedCurrent: true, updated: 1, ready: 1, available: 1}})
		insecure, ready := got[3], got[2]
		if insecure.Type != v1alpha1.ConditionInsecureAuth || insecure.Status != tc.want.status || insecure.Reason != tc.want.reason {
			t.Errorf("anyCaller=%v: %s = %s/%s", tc.anyCaller, insecure.Type, insecure.Status, insecure.Reason)
		}
		if ready.Status != metav1.ConditionTrue {
			t.Errorf("anyCaller=%v: Ready = %s", tc.anyCaller, ready.Status)
		}
	}
}

func TestRouteConditionsKeepTheReferenceMessage(t *testing.T) {
	refErr := &referenceError{Reason: v1alpha1.ReasonSecretNotFound, Message: `Secret "llm" referenced by spec.model.apiKeySecretRef not found`}
	ready := routeReadyCondition(routeFacts{refErr: refErr, desired: 1, rollout: &rolloutState{observedCurrent: true, updated: 1, available: 1}})
	want := refErr.Message + "; running pods keep the last applied configuration"
	if ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
}

func TestStoreConditions(t *testing.T) {
	const uri = "http://m:19530"
	unreachable := errors.New("context deadline exceeded")
	missingSecret := &referenceError{Reason: v1alpha1.ReasonSecretNotFound, Message: "x"}
	missingSource := &referenceError{Reason: v1alpha1.ReasonConfigMapNotFound, Message: `ConfigMap "faq-md" of source "faq" not found`}
	refused := errors.New(`apply ingest Job: jobs.batch "docs-ingest-0123456789" is forbidden: exceeded quota`)
	foreignJob := &referenceError{Reason: v1alpha1.ReasonChildConflict,
		Message: `ingest Job "docs-ingest-0123456789" exists and is not owned by this store; rename the store or remove it`}
	serving := &knowledge.IndexState{Exists: true, Rows: 42, Generation: knowledge.Generation{Number: 3, Collection: "docs_g3", Embedder: "fp"}}
	oldEmbedder := &knowledge.IndexState{Exists: true, Rows: 42, Generation: knowledge.Generation{Number: 3, Collection: "docs_g3", Embedder: "old"}}
	noIndex := &knowledge.IndexState{}
	ownedByAnother := &knowledge.IndexState{Exists: true, Rows: 42, Generation: knowledge.Generation{Number: 3, Collection: "docs_g3", Embedder: "fp", Owner: "team-a/docs"}}
	mismatch := &knowledge.IndexState{Exists: true, Generation: knowledge.Generation{Number: 1, Embedder: "fp"}, SchemaErr: errors.New("dense vectors have 384 dimensions, want 768")}
	running := &jobState{name: "docs-ingest-1", running: true}
	done := &jobState{name: "docs-ingest-1"}
	failed := &jobState{name: "docs-ingest-2", failed: true, message: "Job docs-ingest-2 failed: BackoffLimitExceeded: too many retries"}
	// ingesting is a connected store with sources.
	ingesting := func(f storeFacts) storeFacts {
		f.uri, f.version, f.ingestion, f.fingerprint = uri, "v2.6.0", true, "fp"
		return f
	}
	cases := []struct {
		name  string
		facts storeFacts
		// want is Connected, then SchemaReady and Indexed with sources, then Ready.
		want []wantCondition
		// retry: checked again after RetryAfter, not RecheckAfter.
		retry bool
	}{
		{"connected", storeFacts{uri: uri, version: "v2.6.0"}, []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonConnected}}, false},
		{"unreachable", storeFacts{uri: uri, probeErr: unreachable}, []wantCondition{
			{"False", v1alpha1.ReasonMilvusUnreachable}, {"False", v1alpha1.ReasonMilvusUnreachable}}, true},
		{"token secret missing", storeFacts{uri: uri, refErr: missingSecret}, []wantCondition{
			{"Unknown", v1alpha1.ReasonSecretNotFound}, {"False", v1alpha1.ReasonSecretNotFound}}, true},
		{"sources, Secret missing", storeFacts{uri: uri, ingestion: true, refErr: missingSecret}, []wantCondition{
			{"Unknown", v1alpha1.ReasonSecretNotFound}, {"Unknown", v1alpha1.ReasonMilvusUnreachable},
			{"Unknown", v1alpha1.ReasonMilvusUnreachable}, {"False", v1alpha1.ReasonSecretNotFound}}, true},
		{"sources, index unreadable", storeFacts{uri: uri, ingestion: true, probeErr: unreachable}, []wantCondition{
			{"False", v1alpha1.ReasonMilvusUnreachable}, {"Unknown", v1alpha1.ReasonMilvusUnreachable},
			{"Unknown", v1alpha1.ReasonMilvusUnreachable}, {"False", v1alpha1.ReasonMilvusUnreachable}}, true},
		{"Job not created yet", ingesting(storeFacts{index: noIndex}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"False", v1alpha1.ReasonNoIndex},
			{"False", v1alpha1.ReasonIngestionPending}, {"False", v1alpha1.ReasonNoIndex}}, false},
		{"first ingestion running", ingesting(storeFacts{job: running, index: noIndex}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"False", v1alpha1.ReasonNoIndex},
			{"False", v1alpha1.ReasonIngestionRunning}, {"False", v1alpha1.ReasonNoIndex}}, true},
		{"indexed", ingesting(storeFacts{job: done, index: serving}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"True", v1alpha1.ReasonIndexed}, {"True", v1alpha1.ReasonSchemaReady}}, false},
		{"re-ingestion running, the last generation serves", ingesting(storeFacts{job: running, index: serving}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"False", v1alpha1.ReasonIngestionRunning}, {"True", v1alpha1.ReasonSchemaReady}}, true},
		{"re-ingestion failed, the last generation serves", ingesting(storeFacts{job: failed, index: serving}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"False", v1alpha1.ReasonIngestionFailed}, {"True", v1alpha1.ReasonSchemaReady}}, false},
		{"Job done, alias serves another embedder", ingesting(storeFacts{job: done, index: oldEmbedder}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"False", v1alpha1.ReasonIngestionFailed}, {"True", v1alpha1.ReasonSchemaReady}}, false},
		{"schema mismatch", ingesting(storeFacts{job: done, index: mismatch}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"False", v1alpha1.ReasonSchemaMismatch},
			{"True", v1alpha1.ReasonIndexed}, {"False", v1alpha1.ReasonSchemaMismatch}}, false},
		{"source ConfigMap missing, the last generation serves", ingesting(storeFacts{ingestErr: missingSource, index: serving}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"False", v1alpha1.ReasonConfigMapNotFound}, {"True", v1alpha1.ReasonSchemaReady}}, false},
		{"apply refused, the last generation serves", ingesting(storeFacts{applyErr: refused, index: serving}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"False", v1alpha1.ReasonApplyFailed}, {"True", v1alpha1.ReasonSchemaReady}}, false},
		{"apply refused before any index", ingesting(storeFacts{applyErr: refused, index: noIndex}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"False", v1alpha1.ReasonNoIndex},
			{"False", v1alpha1.ReasonApplyFailed}, {"False", v1alpha1.ReasonNoIndex}}, false},
		{"collection owned by another store", ingesting(storeFacts{owner: "team-b/docs", job: failed, index: ownedByAnother}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"False", v1alpha1.ReasonCollectionOwnedByAnotherStore},
			{"False", v1alpha1.ReasonIngestionFailed}, {"False", v1alpha1.ReasonCollectionOwnedByAnotherStore}}, false},
		{"collection owned by this store", ingesting(storeFacts{owner: "team-a/docs", job: done, index: ownedByAnother}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"True", v1alpha1.ReasonIndexed}, {"True", v1alpha1.ReasonSchemaReady}}, false},
		{"ingest Job owned by someone else, the last generation serves", ingesting(storeFacts{ingestErr: foreignJob, index: serving}), []wantCondition{
			{"True", v1alpha1.ReasonConnected}, {"True", v1alpha1.ReasonSchemaReady},
			{"False", v1alpha1.ReasonChildConflict}, {"True", v1alpha1.ReasonSchemaReady}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := storeConditions(tc.facts)
			types := []string{v1alpha1.ConditionConnected, v1alpha1.ConditionReady}
			if tc.facts.ingestion {
				types = []string{v1alpha1.ConditionConnected, v1alpha1.ConditionSchemaReady, v1alpha1.ConditionIndexed, v1alpha1.ConditionReady}
			}
			if len(got) != len(types) || len(tc.want) != len(types) {
				t.Fatalf("got %d conditions, want %d (test lists %d): %+v", len(got), len(types), len(tc.want), got)
			}
			for i, want := range tc.want {
				if got[i].Type != types[i] || got[i].Status != want.status || got[i].Reason != want.reason {
					t.Errorf("%s = %s/%s (%s), want %s %s/%s", got[i].Type, got[i].Status, got[i].Reason, got[i].Message, types[i], want.status, want.reason)
				}
			}
			wantAfter := time.Hour
			if tc.retry {
				wantAfter = time.Second
			}
			if after := tc.facts.recheckAfter(time.Hour, time.Second); after != wantAfter {
				t.Errorf("checked again after %s, want %s", after, wantAfter)
			}
		})
	}
}

func TestStoreConditionsKeepWhatServes(t *testing.T) {
	refused := errors.New("apply ingest Job: exceeded quota")
	indexed := indexedCondition(storeFacts{uri: "http://m:19530", ingestion: true, applyErr: refused,
		index: &knowledge.IndexState{Exists: true, Generation: knowledge.Generation{Number: 3}}})
	if want := refused.Error() + "; generation 3 keeps serving"; indexed.Message != want {
		t.Errorf("Indexed message %q, want %q", indexed.Message, want)
	}
}

func TestStoreStatusRecordsIngestion(t *testing.T) {
	finished := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	status := &v1alpha1.KnowledgeStoreStatus{Rows: 7, IndexGeneration: 1}
	recordIngestion(status, storeFacts{probeErr: errors.New("unreachable")})
	if status.Rows != 7 || status.IndexGeneration != 1 || status.LastIngestion != nil {
		t.Errorf("nothing read, yet the status changed: %+v", status)
	}
	recordIngestion(status, storeFacts{
		index: &knowledge.IndexState{Exists: true, Rows: 42, Generation: knowledge.Generation{Number: 3, Embedder: "fp"}},
		job:   &jobState{name: "docs-ingest-2", failed: true, message: strings.Repeat("x", 3000), finished: &finished},
	})
	if status.Rows != 42 || status.IndexGeneration != 3 || status.EmbedderFingerprint != "fp" {
		t.Errorf("index not recorded: %+v", status)
	}
	if r := status.LastIngestion; r == nil || r.Result != "Failed" || !r.Time.Equal(&finished) || len(r.Message) > 2010 {
		t.Errorf("last ingestion %+v", r)
	}
	if status.Background != nil {
		t.Errorf("a generation without a background shows %+v", status.Background)
	}

	// The serving generation's background similarity, once recorded.
	background := &knowledge.Background{Mean: 0.8123, StdDev: 0.0311, P50: 0.81, P90: 0.85, P99: 0.9, Samples: 32000}
	recordIngestion(status, storeFacts{index: &knowledge.IndexState{Exists: true, Rows: 42,
		Generation: knowledge.Generation{Number: 4, Embedder: "fp2", Background: background}}})
	want := v1alpha1.BackgroundSimilarity{Mean: 0.8123, StdDev: 0.0311, P50: 0.81, P90: 0.85, P99: 0.9, Samples: 32000}
	if status.Background == nil || *status.Background != want {
		t.Errorf("background %+v, want %+v", status.Background, want)
	}
	recordIngestion(status, storeFacts{probeErr: errors.New("unreachable")})
	if status.Background == nil {
		t.Error("an unreadable index cleared the background")
	}
}

func TestSetConditionKeepsTransitionTimeWhileStatusHolds(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var conditions []metav1.Condition
	setCondition(&conditions, condition(v1alpha1.ConditionReady, false, "A", "a"), 1, clock.Now())
	first := conditions[0].LastTransitionTime

	clock.SetTime(clock.Now().Add(time.Minute))
	setCondition(&conditions, condition(v1alpha1.ConditionReady, false, "B", "b"), 2, clock.Now())
	if !conditions[0].LastTransitionTime.Equal(&first) || conditions[0].Reason != "B" || conditions[0].ObservedGeneration != 2 {
		t.Errorf("same status moved the transition time or lost the update: %+v", conditions[0])
	}

	clock.SetTime(clock.Now().Add(time.Minute))
	setCondition(&conditions, condition(v1alpha1.ConditionReady, true, "C", "c"), 2, clock.Now())
	if got := conditions[0].LastTransitionTime.Time; !got.Equal(clock.Now()) {
		t.Errorf("transition at %v, want %v", got, clock.Now())
	}
}

func TestPromptValidation(t *testing.T) {
	if err := validatePromptText("  \n"); err == nil {
		t.Error("blank prompt accepted")
	}
	if err := validatePromptText(string(make([]byte, maxPromptBytes+1))); err == nil {
		t.Error("oversized prompt accepted")
	}
	if err := validatePromptText("rules"); err != nil {
		t.Errorf("valid prompt refused: %v", err)
	}
}

func TestReadyNews(t *testing.T) {
	ready := &metav1.Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonAvailable}
	waiting := &metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonNoReadyReplicas}
	missing := &metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonKnowledgeStoreMissing}
	cases := []struct {
		name     string
		was, now *metav1.Condition
		want     bool
	}{
		{"a new route waiting for its first pods", nil, waiting, false},
		{"a new route with a missing reference", nil, missing, true},
		{"a new object ready at once", nil, ready, true},
		{"turned ready", waiting, ready, true},
		{"lost its pods", ready, waiting, true},
		{"reason changed", waiting, missing, true},
		{"nothing changed", ready, ready, false},
	}
	for _, tc := range cases {
		if got := readyNews(tc.was, tc.now); got != tc.want {
			t.Errorf("%s: readyNews = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A Job Kubernetes stopped at its deadline is a timed-out ingestion, told
// apart from one that failed by itself; the serving index keeps serving.
func TestTimedOutIngestionIsIndexedFalse(t *testing.T) {
	f := storeFacts{ingestion: true, fingerprint: "fp",
		index: &knowledge.IndexState{Exists: true, Generation: knowledge.Generation{Number: 3, Embedder: "fp"}}}
	f.job = &jobState{name: "docs-ingest-1", failed: true, timedOut: true, message: "Job docs-ingest-1 ran past spec.ingestion.timeout (1h0m0s) and was stopped"}
	got := indexedCondition(f)
	if got.Status != metav1.ConditionFalse || got.Reason != v1alpha1.ReasonIngestionTimedOut ||
		!strings.Contains(got.Message, "spec.ingestion.timeout (1h0m0s)") || !strings.Contains(got.Message, "generation 3 keeps serving") {
		t.Errorf("Indexed = %+v", got)
	}
	f.job.timedOut = false
	if got := indexedCondition(f); got.Reason != v1alpha1.ReasonIngestionFailed {
		t.Errorf("a failed run reads %s", got.Reason)
	}
}

// A Deployment the cache still holds from before the apply is not
// current, however rolled out it looks: it does not carry this
// configuration's hash yet.
func TestRolloutIsCurrentOnlyWithTheConfigHash(t *testing.T) {
	stale := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}}
	stale.Spec.Template.Annotations = map[string]string{configHashAnnotation: "old"}
	s := &routeScope{route: &v1alpha1.QueryRoute{}, deployment: stale, configHash: "new", applied: true}
	if c := progressingCondition(routeFactsOf(s)); c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonRollingOut {
		t.Errorf("Progressing with the previous Deployment = %s/%s, want True/RollingOut", c.Status, c.Reason)
	}
	stale.Spec.Template.Annotations[configHashAnnotation] = "new"
	if c := progressingCondition(routeFactsOf(s)); c.Status != metav1.ConditionFalse {
		t.Errorf("Progressing with the current Deployment rolled out = %s/%s, want False", c.Status, c.Reason)
	}
}
