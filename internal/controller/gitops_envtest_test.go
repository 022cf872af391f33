package controller

import (
	"fmt"
	"os"
	"testing"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// argoHealthScripts reads the Lua health checks of config/argocd, by kind.
func argoHealthScripts(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../config/argocd/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{}
	for _, kind := range []string{"QueryRoute", "KnowledgeStore", "PlatformPrompt", "RouteEvaluation"} {
		if scripts[kind] = cm.Data["resource.customizations.health.ragroute.io_"+kind]; scripts[kind] == "" {
			t.Fatalf("config/argocd/argocd-cm.yaml has no health check for %s", kind)
		}
	}
	return scripts
}

// toLua turns decoded JSON into Lua values, as Argo CD hands obj to a
// health script.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		table := L.NewTable()
		for k, item := range v {
			table.RawSetString(k, toLua(L, item))
		}
		return table
	case []any:
		table := L.NewTable()
		for _, item := range v {
			table.Append(toLua(L, item))
		}
		return table
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	}
	return lua.LNil
}

// argoHealth runs script on obj and returns the status and message.
func argoHealth(t *testing.T, script string, obj map[string]any) (string, string) {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		t.Fatalf("health script: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health script returned %v", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

// TestGitOpsToolsReadEachKindsHealth: Flux and kubectl's kstatus and Argo
// CD's health checks (config/argocd) read each kind's real status as in
// progress, done or failed.
func TestGitOpsToolsReadEachKindsHealth(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	scripts := argoHealthScripts(t)
	check := func(obj client.Object, kind string, wantKstatus status.Status, wantArgo string) {
		t.Helper()
		fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		res, err := status.Compute(&unstructured.Unstructured{Object: fields})
		if err != nil || res.Status != wantKstatus {
			t.Errorf("%s %s: kstatus %v (%v), want %s", kind, obj.GetName(), res, err, wantKstatus)
		}
		if got, message := argoHealth(t, scripts[kind], fields); got != wantArgo || message == "" {
			t.Errorf("%s %s: Argo CD health %s %q, want %s", kind, obj.GetName(), got, message, wantArgo)
		}
	}

	s.routeWorld(t, ns)
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoReadyReplicas)
	check(route, "QueryRoute", status.InProgressStatus, "Progressing")
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	route = s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	check(route, "QueryRoute", status.CurrentStatus, "Healthy")

	s.create(t, newRoute(ns, "orphan", "nostore", "default"))
	orphan := s.waitCondition(t, ns, "orphan", v1alpha1.ConditionDegraded, metav1.ConditionTrue, v1alpha1.ReasonKnowledgeStoreMissing)
	check(orphan, "QueryRoute", status.FailedStatus, "Degraded")

	store := s.waitStore(t, ns, "docs", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonConnected)
	check(store, "KnowledgeStore", status.CurrentStatus, "Healthy")
	noKey := newStore(ns, "nokey", s.milvusURI)
	noKey.Spec.Embedding.APIKeySecretRef = &v1alpha1.SecretKeyRef{Name: "absent", Key: "apiKey"}
	s.create(t, noKey)
	stalled := s.waitStore(t, ns, "nokey", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
	check(stalled, "KnowledgeStore", status.FailedStatus, "Degraded")

	prompt := s.waitPrompt(t, ns, "default", "Ready", func(p *v1alpha1.PlatformPrompt) error {
		if !isReady(p.Status.Conditions) {
			return fmt.Errorf("not Ready: %+v", p.Status.Conditions)
		}
		return nil
	})
	check(prompt, "PlatformPrompt", status.CurrentStatus, "Healthy")
	fromMissing := newPrompt(ns, "from-missing", "")
	fromMissing.Spec.Text = ""
	fromMissing.Spec.TextFrom = &v1alpha1.PromptSource{ConfigMapKeyRef: v1alpha1.ConfigMapKeyRef{Name: "absent", Key: "prompt"}}
	s.create(t, fromMissing)
	broken := s.waitPrompt(t, ns, "from-missing", "ConfigMapNotFound", func(p *v1alpha1.PlatformPrompt) error {
		if len(p.Status.Conditions) == 0 || p.Status.Conditions[0].Reason != v1alpha1.ReasonConfigMapNotFound {
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		return nil
	})
	check(broken, "PlatformPrompt", status.FailedStatus, "Degraded")

	// An object the operator has not seen since its last edit is in
	// progress, whatever its conditions say.
	stale := route.DeepCopy()
	stale.Generation++
	check(stale, "QueryRoute", status.InProgressStatus, "Progressing")
	staleStore := store.DeepCopy()
	staleStore.Generation++
	check(staleStore, "KnowledgeStore", status.InProgressStatus, "Progressing")
	stalePrompt := prompt.DeepCopy()
	stalePrompt.Generation++
	check(stalePrompt, "PlatformPrompt", status.InProgressStatus, "Progressing")
}
