package e2e

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

var full = flag.Bool("e2e.full", false, "also: a private git source, two users' ACL and not-found, a prompt edit's roll, helm test, helm uninstall (make e2e)")

const (
	release    = "rr"
	operatorNS = "ragroute-system"
	ns         = "ragroute-e2e"
	// The git source's credentials, in a labelled Secret.
	gitUser, gitPassword = "ingest-bot", "e2e-git-password"
)

var (
	alice = caller{"alice", "staff"}
	bob   = caller{"bob", "staff,ops"}
)

func TestChartOnARealNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	w := startWorld(ctx, t, *full)
	if w.scripted != nil {
		w.scripted.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
			// searchPolicy always: the route searched; cite the first fragment.
			return testenv.ChatReply{Content: "The documentation covers this [S1]."}
		}
	}
	var gitURL string
	if *full {
		repos := t.TempDir()
		gitRepo(t, repos, "runbooks", map[string]string{"docs/rotation.md": "# On-call rotation\n\nThe on-call rotation hands over every Monday at 10:00 in the ops channel.\n"})
		gitURL = startGitServer(t, w.host+":0", repos, gitUser, gitPassword).URL + "/runbooks.git"
	}

	installed := time.Now()
	repo, tag, _ := strings.Cut(w.image, ":")
	args := []string{"install", release, "../../charts/ragroute", "--namespace", operatorNS, "--create-namespace", "--wait", "--timeout", "4m",
		"--set", "image.repository=" + repo, "--set", "image.tag=" + tag, "--set", "image.pullPolicy=Never"}
	if *full {
		args = append(args, "--set", "tests.image.repository=ragroute/kubectl", "--set", "tests.image.tag=dev")
	}
	if out, err := w.helm(ctx, t, args...); err != nil {
		t.Fatalf("helm install: %v\n%s\noperator logs:\n%s", err, out, w.operatorLogs(ctx))
	}
	w.checkOperatorPod(ctx, t)

	r := w.applySamples(ctx, t, gitURL)
	first, err := r.ask(ctx, alice, "How does the approval of an expense claim work?")
	if err != nil || !first.from("expenses.md") {
		t.Fatalf("alice's expense question: %+v, %v; want an answer from expenses.md", first, err)
	}
	untilFirstAnswer := time.Since(installed)
	fmt.Fprintf(os.Stderr, "e2e: helm install → first answer through the route's Service: %.1f s\n", untilFirstAnswer.Seconds())
	if !*full {
		return
	}

	t.Run("ACL and not found", func(t *testing.T) {
		rollback := "Where do I click to roll back a release in the deploy console?"
		if a, err := r.ask(ctx, alice, rollback); err != nil || a.from("deploy-console.md") {
			t.Errorf("alice (staff) asked the ops runbook's question: %+v, %v; want no ops fragment", a, err)
		}
		if a, err := r.ask(ctx, bob, rollback); err != nil || !a.from("deploy-console.md") {
			t.Errorf("bob (staff, ops): %+v, %v; want deploy-console.md", a, err)
		}
		if a, err := r.ask(ctx, alice, "Zebras, giraffes: savanna migrations?"); err != nil || !a.notFound {
			t.Errorf("a question the docs do not answer: %+v, %v; want not found", a, err)
		}
		if a, err := r.ask(ctx, bob, "When does the on-call rotation hand over?"); err != nil || !a.from("rotation.md") {
			t.Errorf("the private git source's document: %+v, %v; want rotation.md", a, err)
		}
	})
	t.Run("the sample RouteEvaluation passes, then regresses", func(t *testing.T) { w.evaluate(ctx, t) })
	t.Run("prompt edit rolls the route without a failed turn", func(t *testing.T) { w.editPrompt(ctx, t, r) })
	t.Run("helm test", func(t *testing.T) {
		if out, err := w.helm(ctx, t, "test", release, "--namespace", operatorNS, "--timeout", "3m"); err != nil {
			t.Fatalf("helm test: %v\n%s", err, out)
		}
	})
	t.Run("helm uninstall keeps the CRDs", func(t *testing.T) {
		if out, err := w.helm(ctx, t, "uninstall", release, "--namespace", operatorNS, "--wait", "--timeout", "2m"); err != nil {
			t.Fatalf("helm uninstall: %v\n%s", err, out)
		}
		for _, name := range []string{"queryroutes.ragroute.io", "knowledgestores.ragroute.io", "platformprompts.ragroute.io"} {
			if err := w.c.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
				t.Errorf("CRD %s after helm uninstall: %v", name, err)
			}
		}
	})
}

// checkOperatorPod checks the operator runs from the imported image as
// the chart says: uid 65532, a read-only root, Ready.
func (w *world) checkOperatorPod(ctx context.Context, t *testing.T) {
	t.Helper()
	pods := w.podsOf(ctx, operatorNS, "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=operator")
	if len(pods) == 0 {
		t.Fatal("no operator pod after helm install --wait")
	}
	for _, pod := range pods {
		c := pod.Spec.Containers[0]
		if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) == 0 || !pod.Status.ContainerStatuses[0].Ready {
			t.Errorf("operator pod %s: %s, %+v", pod.Name, pod.Status.Phase, pod.Status.ContainerStatuses)
		}
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("operator pod %s: the root filesystem is writable", pod.Name)
		}
		if c.Image != w.image {
			t.Errorf("operator pod %s runs %s, want %s", pod.Name, c.Image, w.image)
		}
	}
}

func (w *world) operatorLogs(ctx context.Context) string {
	var b strings.Builder
	for _, pod := range w.podsOf(ctx, operatorNS, "app.kubernetes.io/instance="+release) {
		b.WriteString(pod.Name + " (" + string(pod.Status.Phase) + "):\n" + w.bed.Node.PodLogs(pod.Namespace, pod.Name))
	}
	return b.String()
}

// applySamples applies config/samples in ns, the endpoints pointed at the
// host (with the scripted model server, the reranker replaced by RRF: it
// has no /rerank), with a git source when gitURL is set; it waits until the
// store is ingested and the route Ready, and returns the route's Service.
// The sample RouteEvaluation is kept for evaluate: its runs would load the
// route while the other steps measure it.
func (w *world) applySamples(ctx context.Context, t *testing.T, gitURL string) route {
	t.Helper()
	if err := w.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	proxy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "support-proxy", Labels: map[string]string{"ragroute.io/use": "true"}},
		StringData: map[string]string{"secret": "e2e-proxy-secret"}}
	if err := w.c.Create(ctx, proxy); err != nil {
		t.Fatal(err)
	}
	var store, queryRoute string
	for _, obj := range samples(ctx, t) {
		obj.SetNamespace(ns)
		switch obj.GetKind() {
		case "KnowledgeStore":
			store = obj.GetName()
			set(t, obj, w.milvus.URI, "spec", "milvus", "uri")
			set(t, obj, w.embedURL, "spec", "embedding", "baseURL")
			if gitURL != "" {
				w.addGitSource(ctx, t, obj, gitURL)
			}
		case "RouteEvaluation":
			w.evaluation = obj
			continue
		case "QueryRoute":
			queryRoute = obj.GetName()
			set(t, obj, w.chatURL, "spec", "model", "baseURL")
			if w.scripted == nil {
				set(t, obj, w.rerankURL, "spec", "rerank", "crossEncoder", "baseURL")
				break
			}
			set(t, obj, map[string]any{"mode": "rrf"}, "spec", "rerank")
			// Hashed bags of words score lower than a real embedder's cosines.
			set(t, obj, map[string]any{"similarityFloor": 0.1, "strictFloor": 0.15, "maxFragments": int64(3)}, "spec", "retrieval")
		}
		if err := w.c.Create(ctx, obj); err != nil {
			t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	readyCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ks := &v1alpha1.KnowledgeStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: store}}
	w.waitReady(readyCtx, t, ks, func() []metav1.Condition { return ks.Status.Conditions })
	qr := &v1alpha1.QueryRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: queryRoute}}
	w.waitReady(readyCtx, t, qr, func() []metav1.Condition { return qr.Status.Conditions })
	svc := &corev1.Service{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: queryRoute}, svc); err != nil {
		t.Fatal(err)
	}
	var port int32
	for _, p := range svc.Spec.Ports {
		if p.Name == "http" { // not "metrics": the probes' port
			port = p.Port
		}
	}
	if port == 0 {
		t.Fatalf("the route's Service has no http port: %+v", svc.Spec.Ports)
	}
	r := route{url: "http://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port))),
		proxyHeader: v1alpha1.DefaultProxySecretHeader, proxySecret: "e2e-proxy-secret"}
	w.waitServiceProgrammed(readyCtx, t, r, qr.Status.ConfigHash)
	return r
}

// waitServiceProgrammed waits until the route's Service reaches the
// route's server. Ready means its pods are; kube-proxy programs the
// Service on its own schedule, a moment later. Until then the address is
// not ours: a connection may be refused, or (on a machine whose egress
// proxy accepts any address, as CI's does) answered by someone else with
// a bare 404, so only the route's own answer counts: its X-Request-Id,
// and the config it names (the pod's downward-API copy of its template's
// hash), which must be configHash, the route's status.
func (w *world) waitServiceProgrammed(ctx context.Context, t *testing.T, r route, configHash string) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("kube-proxy's log, last lines:\n%s", lastLines(w.bed.Node.KubeProxyLog(), 40))
		}
	}()
	start := time.Now()
	waitFor(ctx, t, "the route's Service "+r.url+" answers as the route (kube-proxy has programmed it)", func() (bool, string) {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := r.request(attempt, alice, http.MethodGet, "/v1/models", nil)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		if resp.Header.Get("X-Request-Id") == "" {
			return false, resp.Status + " without the route's X-Request-Id"
		}
		served := resp.Header.Get(podconfig.ConfigHashHeader)
		return served == configHash, fmt.Sprintf("the route answered from config %q; its status says %q", served, configHash)
	})
	fmt.Fprintf(os.Stderr, "e2e: the route's Service answered as the route %.1f s after Ready\n", time.Since(start).Seconds())
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// addGitSource adds the private repository as a source for the ops
// group, its credentials in a Secret labelled for the operator and bound
// to the git server's host.
func (w *world) addGitSource(ctx context.Context, t *testing.T, store *unstructured.Unstructured, url string) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runbooks-git",
		Labels: map[string]string{"ragroute.io/use": "true"}, Annotations: map[string]string{"ragroute.io/allowed-hosts": w.host}},
		StringData: map[string]string{"username": gitUser, "password": gitPassword}}
	if err := w.c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	sources, _, _ := unstructured.NestedSlice(store.Object, "spec", "ingestion", "sources")
	sources = append(sources, map[string]any{"name": "runbooks-git", "principals": []any{"group:ops"},
		"git": map[string]any{"url": url, "ref": "main", "path": "docs", "secretRef": map[string]any{"name": secret.Name}}})
	set(t, store, sources, "spec", "ingestion", "sources")
}

// editPrompt edits the PlatformPrompt while callers keep asking through
// the Service, and checks no turn failed while the route rolled.
func (w *world) editPrompt(ctx context.Context, t *testing.T, r route) {
	deployment := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: "support"}
	if err := w.c.Get(ctx, key, deployment); err != nil {
		t.Fatal(err)
	}
	before := deployment.Generation
	var turns, failed atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var callers sync.WaitGroup
	// 24 users, a turn each every 2.5 s: within the route's 30 turns a
	// minute per user (a burst of a few, then one every 2 s). The local
	// chat model answers one turn at a time, in seconds: two users then.
	users := 24
	if w.scripted == nil {
		users = 2
	}
	for i := range users {
		who := caller{fmt.Sprintf("user-%d", i), "staff"}
		callers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-time.After(2500 * time.Millisecond):
				}
				turns.Add(1)
				if err := r.complete(ctx, who, "How does the approval of an expense claim work?"); err != nil {
					failed.Add(1)
					failures.Store(fmt.Sprintf("%s's turn %d", who.user, n), err.Error())
				}
			}
		})
	}
	time.Sleep(time.Second) // turns in flight before the edit
	edited := time.Now()
	prompt := &v1alpha1.PlatformPrompt{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, prompt); err != nil {
		t.Fatal(err)
	}
	prompt.Spec.Text += "Answer in short sentences.\n"
	if err := w.c.Update(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	rollCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	waitFor(rollCtx, t, "the route rolled out", func() (bool, string) {
		if err := w.c.Get(ctx, key, deployment); err != nil {
			return false, err.Error()
		}
		return deployment.Generation > before && rolledOut(deployment) && len(w.podsOf(ctx, ns, "app.kubernetes.io/name=ragroute-route,app.kubernetes.io/instance=support")) == 1,
			fmt.Sprintf("generation %d, %+v", deployment.Generation, deployment.Status)
	})
	rolled := time.Since(edited)
	time.Sleep(2 * time.Second) // turns on the new pod only
	close(stop)
	callers.Wait()
	fmt.Fprintf(os.Stderr, "e2e: prompt edit → the new pod serving, the old one gone: %.1f s; %d turns during it, %d failed\n",
		rolled.Seconds(), turns.Load(), failed.Load())
	failures.Range(func(k, v any) bool {
		t.Errorf("turn %v failed during the roll: %v", k, v)
		return true
	})
}
