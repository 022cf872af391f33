package controller

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
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

func TestRouteConditionsKeepTheReferenceMessage(t *testing.T) {
	refErr := &referenceError{Reason: v1alpha1.ReasonSecretNotFound, Message: `Secret "llm" referenced by spec.model.apiKeySecretRef not found`}
	ready := routeReadyCondition(routeFacts{refErr: refErr, desired: 1, rollout: &rolloutState{observedCurrent: true, updated: 1, available: 1}})
	want := refErr.Message + "; running pods keep the last applied configuration"
	if ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
}

func TestStoreConditions(t *testing.T) {
	cases := []struct {
		name             string
		check            storeCheck
		connected, ready wantCondition
	}{
		{"connected", storeCheck{uri: "http://m:19530", version: "v2.6.0"},
			wantCondition{"True", v1alpha1.ReasonConnected}, wantCondition{"True", v1alpha1.ReasonConnected}},
		{"unreachable", storeCheck{uri: "http://m:19530", probeErr: errors.New("context deadline exceeded")},
			wantCondition{"False", v1alpha1.ReasonMilvusUnreachable}, wantCondition{"False", v1alpha1.ReasonMilvusUnreachable}},
		{"token secret missing", storeCheck{uri: "http://m:19530", refErr: &referenceError{Reason: v1alpha1.ReasonSecretNotFound, Message: "x"}},
			wantCondition{"Unknown", v1alpha1.ReasonSecretNotFound}, wantCondition{"False", v1alpha1.ReasonSecretNotFound}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := storeConditions(tc.check)
			for i, want := range []wantCondition{tc.connected, tc.ready} {
				if got[i].Status != want.status || got[i].Reason != want.reason {
					t.Errorf("%s = %s/%s, want %s/%s", got[i].Type, got[i].Status, got[i].Reason, want.status, want.reason)
				}
			}
		})
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
