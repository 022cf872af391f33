package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
)

// waitStore waits until the store's condition has status and reason.
func (s *suite) waitStore(t *testing.T, ns, name, condType string, status metav1.ConditionStatus, reason string) *v1alpha1.KnowledgeStore {
	t.Helper()
	store := &v1alpha1.KnowledgeStore{}
	eventually(t, waitFor, fmt.Sprintf("store %s %s=%s/%s", name, condType, status, reason), func() error {
		if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, store); err != nil {
			return err
		}
		c := meta.FindStatusCondition(store.Status.Conditions, condType)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("conditions %+v", store.Status.Conditions)
		}
		return nil
	})
	return store
}

func TestStoreConnectsToRealMilvus(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.create(t, newSecret(ns, "embedder", "apiKey", "k", embedderHost), newStore(ns, "docs", s.milvusURI))

	store := s.waitStore(t, ns, "docs", v1alpha1.ConditionConnected, metav1.ConditionTrue, v1alpha1.ReasonConnected)
	if !strings.HasPrefix(store.Status.ServerVersion, "milvus_lite") || store.Status.LastConnectedTime == nil {
		t.Errorf("status does not report the server: version %q, last connected %v", store.Status.ServerVersion, store.Status.LastConnectedTime)
	}
	if !isReady(store.Status.Conditions) || store.Status.ObservedGeneration != store.Generation {
		t.Errorf("store not Ready for its generation: %+v", store.Status)
	}
}

func TestStoreNamesWhatIsUnreachableOrMissing(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	deadURI := fmt.Sprintf("http://127.0.0.1:%d", port)

	unreachable := newStore(ns, "dead", deadURI)
	wrongDB := newStore(ns, "wrongdb", s.milvusURI)
	wrongDB.Spec.Milvus.Database = "nosuchdb"
	noSecret := newStore(ns, "nosecret", s.milvusURI)
	noSecret.Spec.Milvus.TokenSecretRef = &v1alpha1.SecretKeyRef{Name: "milvus", Key: "token"}
	s.create(t, newSecret(ns, "embedder", "apiKey", "k", embedderHost), unreachable, wrongDB, noSecret)

	store := s.waitStore(t, ns, "dead", v1alpha1.ConditionConnected, metav1.ConditionFalse, v1alpha1.ReasonMilvusUnreachable)
	if c := meta.FindStatusCondition(store.Status.Conditions, v1alpha1.ConditionReady); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, deadURI) {
		t.Errorf("Ready = %+v, want False naming %s", c, deadURI)
	}
	// One sentence for every network failure, not the client's error text
	// (addresses, gRPC details).
	if c := meta.FindStatusCondition(store.Status.Conditions, v1alpha1.ConditionConnected); c.Message != milvusProblem(errors.New("refused"), deadURI, "") {
		t.Errorf("Connected message %q, want only the class and the URI", c.Message)
	}

	store = s.waitStore(t, ns, "wrongdb", v1alpha1.ConditionConnected, metav1.ConditionFalse, v1alpha1.ReasonMilvusUnreachable)
	if c := meta.FindStatusCondition(store.Status.Conditions, v1alpha1.ConditionConnected); !strings.Contains(c.Message, `no database "nosuchdb"`) ||
		strings.Contains(c.Message, "it has") {
		t.Errorf("Connected message %q does not name the database, or shows what the server has", c.Message)
	}

	store = s.waitStore(t, ns, "nosecret", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
	if c := meta.FindStatusCondition(store.Status.Conditions, v1alpha1.ConditionReady); !strings.Contains(c.Message, `Secret "milvus" referenced by spec.milvus.tokenSecretRef`) {
		t.Errorf("Ready message %q does not name the secret", c.Message)
	}
	// Milvus Lite accepts any token; the point is that the Secret arriving
	// is noticed through the index, without touching the store.
	s.create(t, newSecret(ns, "milvus", "token", "root:Milvus", "127.0.0.1"))
	s.waitStore(t, ns, "nosecret", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonConnected)
}
