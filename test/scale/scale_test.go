package scale

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/testenv/kubebed"
)

// sizes is how big a world a run creates.
type sizes struct {
	Routes, Stores, Prompts, Namespaces, Nodes int
}

// The defaults are the small run of `make test`; make bench-operator passes
// -scale.routes=5000 -scale.stores=500 -scale.prompts=50 -scale.namespaces=5
// (BENCH_OPERATOR_ROUTES and its companions change them).
var size = sizes{}

func init() {
	flag.IntVar(&size.Routes, "scale.routes", 20, "QueryRoutes to create")
	flag.IntVar(&size.Stores, "scale.stores", 4, "KnowledgeStores to create (all on one Milvus Lite, distinct collections)")
	flag.IntVar(&size.Prompts, "scale.prompts", 2, "PlatformPrompts to create")
	flag.IntVar(&size.Namespaces, "scale.namespaces", 2, "namespaces to spread them over (each count must divide evenly)")
	flag.IntVar(&size.Nodes, "scale.nodes", 2, "kwok nodes")
	flag.IntVar(&apiServerGOGC, "scale.apiserver-gogc", 400, "the bed API server's GOGC (0: Go's default)")
	flag.DurationVar(&readyTimeout, "scale.ready-timeout", 0, "how long to wait for everything to turn Ready (default: 1m + 300ms per route)")
	flag.DurationVar(&profileAfter, "scale.profile-after", 0, "with RAGROUTE_SCALE_PROFILE: how long after the first create the 50-second CPU profiles start")
}

var readyTimeout time.Duration

var profileAfter time.Duration

// apiServerGOGC: the bed's API server is not what is measured, yet on 2
// cores it competes with the manager for CPU, up to 40% of it its garbage
// collection.
var apiServerGOGC int

// envBenchJSON names a file the figures are written to as JSON.
const envBenchJSON = "BENCH_JSON"

// quiet is how long the operator must make no write before a phase counts
// as settled.
const quiet = 3 * time.Second

func TestOperatorScale(t *testing.T) {
	for _, env := range []string{kubebed.EnvAssets, testenv.EnvMilvusLite} {
		if os.Getenv(env) == "" {
			t.Skipf("%s is unset: run `make test` or `make bench-operator`, which install the test bed (hack/testbed.sh, hack/milvus-lite.sh)", env)
		}
	}
	for _, n := range []int{size.Routes, size.Stores, size.Prompts} {
		if size.Namespaces < 1 || n < size.Namespaces || n%size.Namespaces != 0 {
			t.Fatalf("routes, stores and prompts (%d, %d, %d) must each divide evenly over %d namespaces",
				size.Routes, size.Stores, size.Prompts, size.Namespaces)
		}
	}
	ctrllog.SetLogger(logr.Discard()) // the test's own cache and client log nothing worth reading
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	if os.Getenv("RAGROUTE_SCALE_KEEP") != "" {
		dir, _ = os.MkdirTemp("", "ragroute-scale-")
		t.Logf("logs kept in %s", dir)
	}
	rep := &report{Size: size, APIServerGOGC: apiServerGOGC, Cores: goruntime.NumCPU()}
	rep.LoadAverage[0] = loadAverage()
	built := buildManager(dir)

	// The bed, Milvus Lite, the operator's user.
	start := time.Now()
	bed, err := kubebed.Start(ctx, kubebed.Options{
		Dir:        dir,
		CRDDirs:    []string{filepath.Join("..", "..", "config", "crd", "bases")},
		Nodes:      size.Nodes,
		AuditUsers: []string{operatorUser},
		ControllerManager: testenv.ControllerManagerOptions{
			APIQPS: 1000, APIBurst: 2000, ConcurrentSyncs: 10,
		},
		APIServerGOGC: apiServerGOGC,
		EtcdInMemory:  true,
	})
	if err != nil {
		t.Fatalf("test bed: %v", err)
	}
	t.Cleanup(bed.Stop)
	rep.EtcdInMemory = bed.EtcdInMemory()
	// Before the bed stops: the API server waits for open watches (the
	// test's cache) to end before it exits.
	t.Cleanup(cancel)
	t.Logf("%5.1fs control plane, controller manager, scheduler and kwok nodes up", time.Since(start).Seconds())
	milvus, err := testenv.StartMilvusLite(ctx, dir)
	if err != nil {
		t.Fatalf("milvus lite: %v", err)
	}
	t.Cleanup(milvus.Stop)
	scheme := newScheme(t)
	admin, err := client.New(bed.Admin, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := kubebed.BindClusterRole(ctx, admin, filepath.Join("..", "..", "config", "rbac", "role.yaml"), operatorUser); err != nil {
		t.Fatal(err)
	}
	operatorKubeconfig := filepath.Join(dir, "operator.kubeconfig")
	if _, err := bed.WriteKubeconfig(operatorKubeconfig, operatorUser); err != nil {
		t.Fatal(err)
	}
	rep.JobCompleteSeconds = jobCompletes(ctx, t, admin)
	t.Logf("%5.1fs Milvus Lite up, a Job completed", time.Since(start).Seconds())
	build := <-built
	if build.err != nil {
		t.Fatal(build.err)
	}
	bin := build.bin
	t.Logf("%5.1fs manager built", time.Since(start).Seconds())
	rep.BedSeconds = time.Since(start).Seconds()
	audit := auditLog{path: bed.AuditLogPath}

	w := newWorld(size, milvus.URI)
	watched := watch(ctx, t, bed, scheme, w.namespaces)

	// 1. Everything Ready.
	mgr, err := startManager(ctx, bin, operatorKubeconfig, dir, "manager-1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { mgr.Stop() }()
	t0 := time.Now()
	cpu0 := processCPU()
	profiled := profileCPU(ctx, t, bed.Admin, mgr, profileAfter, 50*time.Second)
	if err := w.create(ctx, admin); err != nil {
		t.Fatal(err)
	}
	rep.CreateSeconds = time.Since(t0).Seconds()
	if readyTimeout == 0 {
		readyTimeout = time.Minute + time.Duration(size.Routes)*300*time.Millisecond
	}
	waitFor(t, readyTimeout, "all prompts, stores and routes Ready", func() error { return watched.allReady(w) })
	rep.ReadySeconds = time.Since(t0).Seconds()
	rep.ReadyCPUSeconds = cpuSince(cpu0, processCPU())
	profiled()
	profileManagerHeap(ctx, t, mgr)
	t.Logf("%5.1fs all Ready", time.Since(start).Seconds())
	settle(t, mgr, audit, w)
	created, err := audit.count(0, -1)
	if err != nil {
		t.Fatal(err)
	}
	rep.Create = phaseFigures(t, mgr, created, len(w.routes))

	// 2. Edit one prompt: exactly its routes roll.
	prompt := w.prompts[0]
	affected := w.routesOf(prompt)
	before := watched.templateHashes()
	from, _ := audit.offset()
	t1 := time.Now()
	patch := client.MergeFrom(prompt.DeepCopy())
	prompt.Spec.Text += " Answer in the language of the question."
	if err := admin.Patch(ctx, prompt, patch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, max(readyTimeout/2, time.Minute+time.Duration(len(affected))*300*time.Millisecond),
		"the prompt's routes rolled out and Ready", func() error { return watched.rolledOut(affected, before) })
	editReady := time.Since(t1).Seconds()
	t.Logf("%5.1fs prompt edit rolled out", time.Since(start).Seconds())
	settle(t, mgr, audit, w)
	edited, err := audit.count(from, -1)
	if err != nil {
		t.Fatal(err)
	}
	rolled := changed(before, watched.templateHashes())
	rep.Edit = editFigures{
		Prompt:            prompt.Namespace + "/" + prompt.Name,
		RoutesUsingPrompt: len(affected),
		DeploymentsRolled: len(rolled),
		ReadySeconds:      editReady,
		Writes:            edited,
	}
	if rss, err := peakRSS(mgr.Pid()); err == nil {
		rep.ManagerPeakRSS = rss
	}

	// 3. Restart the manager with nothing changed.
	mgr.Stop()
	t.Logf("%5.1fs manager stopped", time.Since(start).Seconds())
	time.Sleep(time.Second)
	snapshot := versions(ctx, t, admin, w.namespaces)
	from, _ = audit.offset()
	t2 := time.Now()
	mgr, err = startManager(ctx, bin, operatorKubeconfig, dir, "manager-2")
	if err != nil {
		t.Fatal(err)
	}
	settle(t, mgr, audit, w)
	restarted, err := audit.count(from, -1)
	if err != nil {
		t.Fatal(err)
	}
	rep.Restart = restartFigures{
		SettledSeconds: time.Since(t2).Seconds() - quiet.Seconds(),
		Writes:         restarted,
		ObjectsChanged: diffVersions(snapshot, versions(ctx, t, admin, w.namespaces)),
	}
	if m, err := mgr.scrape(); err == nil {
		rep.Restart.Reconciles = reconciles(m)
	}
	if rss, err := peakRSS(mgr.Pid()); err == nil {
		rep.Restart.ManagerPeakRSS = rss
	}

	t.Logf("%5.1fs restarted manager settled", time.Since(start).Seconds())
	rep.LoadAverage[1] = loadAverage()
	rep.print(t)
	if path := os.Getenv(envBenchJSON); path != "" {
		if err := rep.writeJSON(path); err != nil {
			t.Fatal(err)
		}
	}

	// What must hold at any size.
	if rep.Edit.DeploymentsRolled != rep.Edit.RoutesUsingPrompt {
		t.Errorf("editing %s rolled %d Deployments, want exactly its %d routes", rep.Edit.Prompt, rep.Edit.DeploymentsRolled, rep.Edit.RoutesUsingPrompt)
	}
	for key := range rolled {
		if !affected[key] {
			t.Errorf("editing %s rolled %s, which does not use it", rep.Edit.Prompt, key)
		}
	}
	rep.checkRestart(t)
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// jobCompletes checks the bed itself: a Job's pod is scheduled onto a kwok
// node, runs and succeeds, and the Job controller completes the Job. It
// returns how long that took.
func jobCompletes(ctx context.Context, t *testing.T, c client.Client) float64 {
	t.Helper()
	start := time.Now()
	ns := "scale-bed"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "hello", Image: "busybox", Command: []string{"true"}}},
			}},
		},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "a Job completes on the kwok nodes", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		for _, cond := range job.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		var states []string
		for _, p := range pods.Items {
			state := fmt.Sprintf("pod %s on %q: %s", p.Name, p.Spec.NodeName, p.Status.Phase)
			for _, c := range p.Status.Conditions {
				state += fmt.Sprintf(" %s=%s %s", c.Type, c.Status, c.Message)
			}
			states = append(states, state)
		}
		return fmt.Errorf("Job active %d, succeeded %d; %s", job.Status.Active, job.Status.Succeeded, strings.Join(states, "; "))
	})
	return time.Since(start).Seconds()
}

// watched is an informer cache of what the run waits on.
type watched struct{ cache.Cache }

func watch(ctx context.Context, t *testing.T, bed *kubebed.Bed, scheme *runtime.Scheme, namespaces []string) watched {
	t.Helper()
	byNS := map[string]cache.Config{}
	for _, ns := range namespaces {
		byNS[ns] = cache.Config{}
	}
	c, err := cache.New(bed.Admin, cache.Options{Scheme: scheme, DefaultNamespaces: byNS})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&v1alpha1.QueryRoute{}, &v1alpha1.KnowledgeStore{}, &v1alpha1.PlatformPrompt{}, &appsv1.Deployment{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return watched{c}
}

// readyNow reports whether conditions say Ready for the current generation.
func readyNow(conditions []metav1.Condition, generation int64) bool {
	c := meta.FindStatusCondition(conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

func (c watched) allReady(w *world) error {
	ctx := context.Background()
	prompts, stores, routes := &v1alpha1.PlatformPromptList{}, &v1alpha1.KnowledgeStoreList{}, &v1alpha1.QueryRouteList{}
	for _, l := range []client.ObjectList{prompts, stores, routes} {
		// Read only, five times a second: copying 5,000 routes each time
		// cost the test more CPU than the manager used.
		if err := c.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
	}
	var ready [3]int
	for _, p := range prompts.Items {
		if readyNow(p.Status.Conditions, p.Generation) {
			ready[0]++
		}
	}
	for _, s := range stores.Items {
		if readyNow(s.Status.Conditions, s.Generation) {
			ready[1]++
		}
	}
	for _, r := range routes.Items {
		if readyNow(r.Status.Conditions, r.Generation) {
			ready[2]++
		}
	}
	if ready[0] == len(w.prompts) && ready[1] == len(w.stores) && ready[2] == len(w.routes) {
		return nil
	}
	return fmt.Errorf("Ready: %d/%d prompts, %d/%d stores, %d/%d routes",
		ready[0], len(w.prompts), ready[1], len(w.stores), ready[2], len(w.routes))
}

const configHashAnnotation = "ragroute.io/config-hash"

// templateHashes is each route Deployment's pod-template config hash.
func (c watched) templateHashes() map[client.ObjectKey]string {
	list := &appsv1.DeploymentList{}
	if err := c.List(context.Background(), list); err != nil {
		return nil
	}
	out := map[client.ObjectKey]string{}
	for _, d := range list.Items {
		out[client.ObjectKeyFromObject(&d)] = d.Spec.Template.Annotations[configHashAnnotation]
	}
	return out
}

// changed are the Deployments whose hash differs from before.
func changed(before, after map[client.ObjectKey]string) map[client.ObjectKey]bool {
	out := map[client.ObjectKey]bool{}
	for key, hash := range after {
		if before[key] != hash {
			out[key] = true
		}
	}
	return out
}

// rolledOut is nil once every affected route's Deployment carries a new
// hash, has rolled it out to all replicas (the old pod gone), and the route
// reports Ready on that hash.
func (c watched) rolledOut(affected map[client.ObjectKey]bool, before map[client.ObjectKey]string) error {
	ctx := context.Background()
	pending := 0
	for key := range affected {
		d := &appsv1.Deployment{}
		r := &v1alpha1.QueryRoute{}
		if err := c.Get(ctx, key, d); err != nil {
			return err
		}
		if err := c.Get(ctx, key, r); err != nil {
			return err
		}
		hash := d.Spec.Template.Annotations[configHashAnnotation]
		want := ptr.Deref(d.Spec.Replicas, 1)
		done := hash != before[key] &&
			d.Status.ObservedGeneration >= d.Generation &&
			d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want && d.Status.Replicas == want &&
			r.Status.ConfigHash == hash && readyNow(r.Status.Conditions, r.Generation)
		if !done {
			pending++
		}
	}
	if pending > 0 {
		return fmt.Errorf("%d of %d routes still rolling", pending, len(affected))
	}
	return nil
}

// settle waits until the manager has reconciled every object at least once
// since it started, its work queues are empty, and it has made no write for
// `quiet`.
func settle(t *testing.T, m *manager, audit auditLog, w *world) {
	t.Helper()
	want := map[string]int{"queryroute": len(w.routes), "knowledgestore": len(w.stores), "platformprompt": len(w.prompts)}
	waitFor(t, 5*time.Minute, "the manager idle", func() error {
		ms, err := m.scrape()
		if err != nil {
			return err
		}
		for controller, n := range want {
			sel := fmt.Sprintf("controller=%q", controller)
			if got := ms.sum("controller_runtime_reconcile_total", sel); got < float64(n) {
				return fmt.Errorf("%s: %v reconciles, want at least %d", controller, got, n)
			}
			if depth := ms.sum("workqueue_depth", fmt.Sprintf("name=%q", controller)); depth > 0 {
				return fmt.Errorf("%s: %v queued", controller, depth)
			}
			if active := ms.sum("controller_runtime_active_workers", sel); active > 0 {
				return fmt.Errorf("%s: %v reconciling", controller, active)
			}
		}
		return nil
	})
	last, _ := audit.offset()
	since := time.Now()
	waitFor(t, 5*time.Minute, "the manager quiet", func() error {
		now, err := audit.offset()
		if err != nil {
			return err
		}
		if now != last {
			last, since = now, time.Now()
		}
		if time.Since(since) < quiet {
			return fmt.Errorf("wrote %s ago", time.Since(since).Round(time.Millisecond))
		}
		return nil
	})
}

// versions is the resourceVersion of every object in the namespaces that
// the operator or the workload controllers write.
func versions(ctx context.Context, t *testing.T, c client.Client, namespaces []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lists := map[string]func() client.ObjectList{
		"QueryRoute":     func() client.ObjectList { return &v1alpha1.QueryRouteList{} },
		"KnowledgeStore": func() client.ObjectList { return &v1alpha1.KnowledgeStoreList{} },
		"PlatformPrompt": func() client.ObjectList { return &v1alpha1.PlatformPromptList{} },
		"ConfigMap":      func() client.ObjectList { return &corev1.ConfigMapList{} },
		"Service":        func() client.ObjectList { return &corev1.ServiceList{} },
		"Deployment":     func() client.ObjectList { return &appsv1.DeploymentList{} },
		"ReplicaSet":     func() client.ObjectList { return &appsv1.ReplicaSetList{} },
		"Pod":            func() client.ObjectList { return &corev1.PodList{} },
		"Event":          func() client.ObjectList { return &corev1.EventList{} },
		"Job":            func() client.ObjectList { return &batchv1.JobList{} },
	}
	for kind, newList := range lists {
		for _, ns := range namespaces {
			list := newList()
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				t.Fatalf("list %s in %s: %v", kind, ns, err)
			}
			_ = meta.EachListItem(list, func(o runtime.Object) error {
				obj := o.(client.Object)
				out[kind+" "+obj.GetNamespace()+"/"+obj.GetName()] = obj.GetResourceVersion()
				return nil
			})
		}
	}
	return out
}

// diffVersions counts, by kind, the objects created, changed or deleted.
func diffVersions(before, after map[string]string) map[string]int {
	out := map[string]int{}
	kindOf := func(key string) string {
		for i := range key {
			if key[i] == ' ' {
				return key[:i]
			}
		}
		return key
	}
	for key, rv := range after {
		if before[key] != rv {
			out[kindOf(key)]++
		}
	}
	for key := range before {
		if _, ok := after[key]; !ok {
			out[kindOf(key)]++
		}
	}
	return out
}

// waitFor polls check until it returns nil, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
