package controller

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// fullInputs uses every optional part of the API, so the goldens show how
// each one renders.
func fullInputs() routeInputs {
	route := newRoute("acme-rag", "support", "docs", "default")
	route.UID = "6c1d5a0e-0000-4000-8000-000000000001"
	route.Spec.Model.Temperature = ptr.To(0.1)
	route.Spec.Model.SearchPolicy = v1alpha1.SearchPolicyAlways
	route.Spec.WebSearch = &v1alpha1.WebSearch{BaseURL: "http://search.tools.svc/v1",
		APIKeySecretRef: &v1alpha1.SecretKeyRef{Name: "search", Key: "apiKey"}}
	route.Spec.Retrieval = &v1alpha1.RetrievalSettings{SimilarityFloorSigmas: ptr.To(3.0), StrictFloor: ptr.To(0.5), MaxFragments: 4}
	route.Spec.Rerank = &v1alpha1.RerankSettings{Mode: v1alpha1.RerankCrossEncoder, CrossEncoder: &v1alpha1.CrossEncoder{
		BaseURL: "http://rerank.models.svc/v1", Model: "bge-reranker-v2-m3"}}
	route.Spec.Answer = &v1alpha1.AnswerSettings{WhenModelRefuses: v1alpha1.RefusalQuote, Answerability: &v1alpha1.AnswerabilitySettings{
		Check: v1alpha1.AnswerabilityCoverage, MinCoverage: ptr.To(0.45), Names: v1alpha1.AnswerabilityNamesRequire, MinRelevance: ptr.To(0.02),
		CalibratedBy: "RouteEvaluation support-dev, 6 December 2026"},
		Grounding: &v1alpha1.GroundingSettings{Policy: v1alpha1.GroundingStrip, Scorer: v1alpha1.GroundingJudge},
		Judge: &v1alpha1.JudgeModel{BaseURL: "https://judge.models.svc/v1", Name: "qwen2.5-32b-instruct",
			APIKeySecretRef: &v1alpha1.SecretKeyRef{Name: "judge", Key: "apiKey"},
			CalibratedBy:    "eval-answers --support-only, test/eval/support, 9 December 2026: precision 0.90"}}
	route.Spec.Cache = &v1alpha1.CacheSettings{Backend: v1alpha1.BackendRedis, TTL: &metav1.Duration{Duration: 90e9}}
	route.Spec.Turns = &v1alpha1.TurnSettings{Backend: v1alpha1.BackendRedis}
	route.Spec.Redis = &v1alpha1.RedisConnection{Address: "redis.acme-rag.svc:6379", Username: "support-route",
		PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "redis", Key: "password"},
		TLS:               &v1alpha1.RedisTLS{CASecretRef: &v1alpha1.SecretKeyRef{Name: "redis-tls", Key: "ca.crt"}, ServerName: "redis.internal"},
		SealKeySecretRef:  v1alpha1.SecretKeyRef{Name: "redis", Key: "sealKey"}}
	route.Spec.Replicas = ptr.To[int32](3)
	route.Spec.CORS = &v1alpha1.RouteCORS{AllowedOrigins: []string{"https://chat.acme.example"}}
	route.Spec.Pod = &v1alpha1.RoutePodSettings{
		Annotations:  map[string]string{"prometheus.io/scrape": "true", configHashAnnotation: "not the admin's"},
		Labels:       map[string]string{"team": "support", "app.kubernetes.io/name": "not the admin's"},
		NodeSelector: map[string]string{"pool": "cpu"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "rag", Effect: corev1.TaintEffectNoSchedule}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: corev1.ScheduleAnyway}},
		PriorityClassName: "rag-serving",
	}

	store := newStore("acme-rag", "docs", "https://milvus.milvus.svc:19530")
	store.Spec.Milvus.TokenSecretRef = &v1alpha1.SecretKeyRef{Name: "milvus", Key: "token"}
	store.Spec.Milvus.TLS = &v1alpha1.MilvusTLS{ServerName: "milvus.internal"}
	store.Spec.Search = &v1alpha1.SearchSettings{Primitives: []v1alpha1.SearchPrimitive{"titleSparse", "textDense"}, RRFK: 40}
	store.Spec.Embedding.QueryPrefix, store.Spec.Embedding.DocumentPrefix = "query: ", "passage: "

	uses := append(storeSecretKeys(&store.Spec), routeSecretKeys(&route.Spec)...)
	return routeInputs{
		route: route, store: store, promptName: "default", env: uses,
		prompt: promptContent{Platform: "You are ACME's internal assistant.", NotFound: "Not in ACME's docs.",
			NotFoundByLanguage: map[string]string{"ru": "В документации ACME этого нет."},
			Styles:             map[string]string{"screen": "Be brief.", "concept": "Explain why."}},
	}
}

func TestRenderedConfigGolden(t *testing.T) {
	data, err := marshalRouteConfig(renderRouteConfig(fullInputs()))
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "route-config.golden.json", data)
}

func TestChildrenGolden(t *testing.T) {
	in := fullInputs()
	data, err := marshalRouteConfig(renderRouteConfig(in))
	if err != nil {
		t.Fatal(err)
	}
	hash := routeConfigHash(data, nil)
	for name, obj := range map[string]any{
		"deployment.golden.yaml":    buildRouteDeployment(in.route, "ragroute/ragroute:v0.1.0", hash, in.env),
		"service.golden.yaml":       buildRouteService(in.route),
		"networkpolicy.golden.yaml": buildRouteNetworkPolicy(proxiedRoute()),
		"pdb.golden.yaml":           buildRoutePDB(scaledRoute()),
		"hpa.golden.yaml":           buildRouteHPA(scaledRoute()),
	} {
		compareGolden(t, name, toYAML(t, obj))
	}
}

func toYAML(t *testing.T, obj any) []byte {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.JSONToYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConfigMapHoldsOnlyTheConfig(t *testing.T) {
	in := fullInputs()
	data, err := marshalRouteConfig(renderRouteConfig(in))
	if err != nil {
		t.Fatal(err)
	}
	cm := buildRouteConfigMap(in.route, data)
	if len(cm.Data) != 1 || cm.Data["route.json"] != string(data) {
		t.Errorf("ConfigMap data keys %v", cm.Data)
	}
	if owner := cm.OwnerReferences[0]; !*owner.Controller || *owner.Kind != "QueryRoute" || *owner.UID != in.route.UID {
		t.Errorf("owner %+v", owner)
	}
}

func TestConfigHashFollowsWhatPodsRun(t *testing.T) {
	in := fullInputs()
	base, _ := marshalRouteConfig(renderRouteConfig(in))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "llm", UID: "u1", ResourceVersion: "10"}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "embedder", UID: "u2", ResourceVersion: "11"}}
	hash := routeConfigHash(base, []*corev1.Secret{secret, other})

	if routeConfigHash(base, []*corev1.Secret{other, secret}) != hash {
		t.Error("the order Secrets were listed in changed the hash")
	}
	rotated := secret.DeepCopy()
	rotated.ResourceVersion = "12"
	if routeConfigHash(base, []*corev1.Secret{rotated, other}) == hash {
		t.Error("rotating a Secret did not change the hash")
	}
	reordered := fullInputs()
	reordered.store.Spec.Search.Primitives = []v1alpha1.SearchPrimitive{"textDense", "titleSparse"}
	if data, _ := marshalRouteConfig(renderRouteConfig(reordered)); !bytes.Equal(data, base) {
		t.Error("the order of a set (search primitives) changed the config")
	}
	in.prompt.Platform += " Never reveal credentials."
	if data, _ := marshalRouteConfig(renderRouteConfig(in)); routeConfigHash(data, nil) == routeConfigHash(base, nil) {
		t.Error("a prompt change did not change the hash")
	}
}

func TestIngestBuildersGolden(t *testing.T) {
	store := newStore("acme-rag", "docs", "http://milvus.milvus.svc:19530")
	store.UID = "6c1d5a0e-0000-4000-8000-000000000002"
	store.Spec.Milvus.TokenSecretRef = &v1alpha1.SecretKeyRef{Name: "milvus", Key: "token"}
	store.Spec.Embedding.QueryPrefix, store.Spec.Embedding.DocumentPrefix = "query: ", "passage: "
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{
		Schedule: "0 */6 * * *",
		Chunking: &v1alpha1.ChunkingSettings{MaxTokens: 180, OverlapTokens: 20, MergeBelowTokens: 50},
		Sources: []v1alpha1.IngestionSource{
			{Name: "faq", ConfigMap: &v1alpha1.LocalObjectRef{Name: "faq-md"}},
			{Name: "handbook", PVC: &v1alpha1.PVCSource{ClaimName: "docs", Path: "handbook"}, Principals: []string{"group:engineering"}},
			{Name: "runbooks", Git: &v1alpha1.GitSource{URL: "https://git.acme.example/runbooks.git", Ref: "v2", Path: "docs", SecretRef: &v1alpha1.LocalObjectRef{Name: "git"}}},
		},
	}
	data, err := marshalIngestConfig(renderIngestConfig(store))
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "ingest-config.golden.json", data)
	compareGolden(t, "ingest-cronjob.golden.yaml", toYAML(t, buildIngestCronJob(store, "ragroute/ragroute:v0.1.0", "0123456789abcdef", storeSecretKeys(&store.Spec))))
	compareGolden(t, "ingest-job.golden.yaml", toYAML(t, buildIngestJob(store, "ragroute/ragroute:v0.1.0", "0123456789abcdef", storeSecretKeys(&store.Spec))))
}

func TestRenderRetrievalFloors(t *testing.T) {
	diversity := podconfig.Diversity{MaxPerDocument: 3, Margin: 0.05, Dominance: 0.4}
	cases := []struct {
		name string
		in   *v1alpha1.RetrievalSettings
		want podconfig.Retrieval
	}{
		{"defaults", nil, podconfig.Retrieval{SimilarityFloor: 0.2, StrictFloor: 0.35, MaxFragments: 6, Diversity: diversity}},
		{"raw", &v1alpha1.RetrievalSettings{SimilarityFloor: ptr.To(0.25), StrictFloor: ptr.To(0.4)},
			podconfig.Retrieval{SimilarityFloor: 0.25, StrictFloor: 0.4, MaxFragments: 6, Diversity: diversity}},
		// A relative floor keeps the raw default as the floor in force
		// until the store's background is recorded.
		{"relative", &v1alpha1.RetrievalSettings{SimilarityFloorSigmas: ptr.To(3.0), StrictFloorSigmas: ptr.To(5.0)},
			podconfig.Retrieval{SimilarityFloor: 0.2, SimilarityFloorSigmas: ptr.To(3.0), StrictFloor: 0.35, StrictFloorSigmas: ptr.To(5.0), MaxFragments: 6, Diversity: diversity}},
		{"mixed", &v1alpha1.RetrievalSettings{SimilarityFloorSigmas: ptr.To(2.5), StrictFloor: ptr.To(0.6), MaxFragments: 3},
			podconfig.Retrieval{SimilarityFloor: 0.2, SimilarityFloorSigmas: ptr.To(2.5), StrictFloor: 0.6, MaxFragments: 3, Diversity: diversity}},
		// Confidence and diversity as written; a diversity field left out
		// keeps its default.
		{"confidence and diversity", &v1alpha1.RetrievalSettings{MinConfidence: ptr.To(3.25), Diversity: &v1alpha1.DiversitySettings{MaxPerDocument: 1}},
			podconfig.Retrieval{SimilarityFloor: 0.2, StrictFloor: 0.35, MaxFragments: 6, MinConfidence: ptr.To(3.25),
				Diversity: podconfig.Diversity{MaxPerDocument: 1, Margin: 0.05, Dominance: 0.4}}},
		// Dominance 0 turns the rule off.
		{"no dominance", &v1alpha1.RetrievalSettings{Diversity: &v1alpha1.DiversitySettings{Dominance: ptr.To(0.0)}},
			podconfig.Retrieval{SimilarityFloor: 0.2, StrictFloor: 0.35, MaxFragments: 6,
				Diversity: podconfig.Diversity{MaxPerDocument: 3, Margin: 0.05}}},
	}
	for _, tc := range cases {
		// Re-search on and flagged fragments kept, unless written.
		tc.want.Research, tc.want.FlaggedFragments = true, "keep"
		if got := renderRetrieval(tc.in, false); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: rendered %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// With a cross-encoder the strict floor reads a relevance: its default
	// is the relevance's, a floor written stays as written.
	if got := renderRetrieval(nil, true); got.StrictFloor != 0.01 || got.SimilarityFloor != 0.2 {
		t.Errorf("cross-encoder defaults: strict floor %g, similarity floor %g; want 0.01 and 0.2", got.StrictFloor, got.SimilarityFloor)
	}
	if got := renderRetrieval(&v1alpha1.RetrievalSettings{StrictFloor: ptr.To(0.05)}, true); got.StrictFloor != 0.05 {
		t.Errorf("cross-encoder with strictFloor 0.05: rendered %g", got.StrictFloor)
	}
	in := &v1alpha1.RetrievalSettings{Research: ptr.To(false), ResearchBelow: ptr.To(0.4), FlaggedFragments: v1alpha1.FlaggedQuarantine}
	if got := renderRetrieval(in, false); got.Research || *got.ResearchBelow != 0.4 || got.FlaggedFragments != "quarantine" {
		t.Errorf("re-search off, below 0.4, quarantine: rendered %+v", got)
	}
}

func TestRenderSearchWeights(t *testing.T) {
	got := renderSearch(&v1alpha1.SearchSettings{Primitives: []v1alpha1.SearchPrimitive{"textSparse", "textDense"},
		Weights: &v1alpha1.SearchWeights{TextSparse: ptr.To(0.5)}})
	want := map[string]float64{"textDense": 1, "textSparse": 0.5}
	if !reflect.DeepEqual(got.Weights, want) || got.Candidates != 30 {
		t.Errorf("rendered %+v, want weights %v and 30 candidates", got, want)
	}
	defaults := map[string]float64{"textDense": 1, "textSparse": 0.5, "titleDense": 0, "titleSparse": 0}
	if got := renderSearch(nil); !reflect.DeepEqual(got.Weights, defaults) {
		t.Errorf("default weights %v, want %v", got.Weights, defaults)
	}
}

// An agentic route renders its tool protocol, auto unless set; a
// single-round one none.
func TestRenderToolProtocol(t *testing.T) {
	for _, c := range []struct {
		spec v1alpha1.QueryRouteSpec
		want podconfig.ToolProtocol
	}{
		{v1alpha1.QueryRouteSpec{Mode: v1alpha1.ModeSingleRound}, ""},
		{v1alpha1.QueryRouteSpec{Mode: v1alpha1.ModeAgentic}, podconfig.ToolProtocolAuto},
		{v1alpha1.QueryRouteSpec{Mode: v1alpha1.ModeAgentic, Agentic: &v1alpha1.AgenticSettings{ToolProtocol: "json"}}, podconfig.ToolProtocolJSON},
	} {
		if got := renderToolProtocol(&c.spec); got != c.want {
			t.Errorf("mode %s, agentic %+v: %q, want %q", c.spec.Mode, c.spec.Agentic, got, c.want)
		}
	}
}

// proxiedRoute trusts a proxy that proves itself, from two peer groups.
// scaledRoute has a disruption budget and an autoscaler.
func scaledRoute() *v1alpha1.QueryRoute {
	route := fullInputs().route
	route.Spec.DisruptionBudget = &v1alpha1.RouteDisruptionBudget{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	route.Spec.Autoscaling = &v1alpha1.RouteAutoscaling{MinReplicas: 2, MaxReplicas: 10,
		TargetCPUUtilizationPercentage: ptr.To[int32](70), TargetTurnsInFlightPerPod: ptr.To[int32](8)}
	return route
}

// An autoscaled route's Deployment leaves replicas to the autoscaler; the
// others carry the route's own; neither has a budget or autoscaler it
// did not ask for.
func TestAutoscalerOwnsReplicas(t *testing.T) {
	if d := buildRouteDeployment(scaledRoute(), "img", "h", nil); d.Spec.Replicas != nil {
		t.Errorf("an autoscaled route's Deployment sets replicas %d", *d.Spec.Replicas)
	}
	plain := fullInputs().route
	if d := buildRouteDeployment(plain, "img", "h", nil); d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want the route's 3", d.Spec.Replicas)
	}
	if buildRoutePDB(plain) != nil || buildRouteHPA(plain) != nil {
		t.Error("a route without a budget or autoscaling renders one")
	}
}

func proxiedRoute() *v1alpha1.QueryRoute {
	route := fullInputs().route
	route.Spec.Auth = v1alpha1.RouteAuth{TrustedProxy: &v1alpha1.TrustedProxyAuth{
		SecretRef: &v1alpha1.SecretKeyRef{Name: "support-proxy", Key: "secret"},
		From: []v1alpha1.NetworkPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "auth"}},
			PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "app.kubernetes.io/name", Operator: metav1.LabelSelectorOpIn, Values: []string{"oauth2-proxy"}}}},
		}},
		MonitoringFrom: []v1alpha1.NetworkPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
	}}
	return route
}

func TestNetworkPolicyOnlyForProxiedRoutesWithPeers(t *testing.T) {
	route := proxiedRoute()
	if buildRouteNetworkPolicy(route) == nil {
		t.Fatal("a trusted-proxy route with peers gets no NetworkPolicy")
	}
	route.Spec.Auth.TrustedProxy.From = nil
	if buildRouteNetworkPolicy(route) != nil {
		t.Error("a route naming no proxy peers gets a NetworkPolicy (it would shut every caller out)")
	}
	if buildRouteNetworkPolicy(fullInputs().route) != nil {
		t.Error("a JWT route gets a NetworkPolicy")
	}
}

// The kubelet and Prometheus reach the route on its metrics port, where
// `ragroute serve` serves the probes and /metrics (the rendered config's
// metricsPort); only the proxy reaches the API's port, where identity
// headers are believed.
func TestProbesAndMetricsHaveTheirOwnPort(t *testing.T) {
	in := fullInputs()
	in.route = proxiedRoute()
	cfg := renderRouteConfig(in)
	container := buildRouteDeployment(in.route, "img", "h", nil).Spec.Template.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range container.Ports {
		ports[*p.Name] = *p.ContainerPort
	}
	if ports["http"] != cfg.Server.Port || ports["metrics"] != cfg.Server.MetricsPort || cfg.Server.MetricsPort == cfg.Server.Port {
		t.Errorf("container ports %v, config's server %+v: want http on port and metrics on metricsPort", ports, cfg.Server)
	}
	for name, probe := range map[string]*corev1ac.ProbeApplyConfiguration{
		"startup": container.StartupProbe, "liveness": container.LivenessProbe, "readiness": container.ReadinessProbe,
	} {
		if port := probe.HTTPGet.Port; port == nil || port.String() != "metrics" {
			t.Errorf("the %s probe is on port %v, want metrics", name, port)
		}
	}
	service := map[string]string{}
	for _, p := range buildRouteService(in.route).Spec.Ports {
		service[*p.Name] = p.TargetPort.String()
	}
	if service["http"] != "http" || service["metrics"] != "metrics" {
		t.Errorf("Service ports %v: want http and metrics", service)
	}
	rules := buildRouteNetworkPolicy(in.route).Spec.Ingress
	// The proxy and the route's evaluation runs on http (TestRouteAdmitsItsEvaluationRuns).
	if len(rules) != 2 || rules[0].Ports[0].Port.String() != "http" || len(rules[0].From) != len(in.route.Spec.Auth.TrustedProxy.From)+1 ||
		rules[1].Ports[0].Port.String() != "metrics" || len(rules[1].From) != len(in.route.Spec.Auth.TrustedProxy.MonitoringFrom) {
		t.Errorf("NetworkPolicy ingress %s: want the proxy on http, the monitoring peers on metrics only", toYAML(t, rules))
	}
	in.route.Spec.Auth.TrustedProxy.MonitoringFrom = nil
	if rules := buildRouteNetworkPolicy(in.route).Spec.Ingress; len(rules) != 1 || rules[0].Ports[0].Port.String() != "http" {
		t.Errorf("without monitoring peers, ingress %s: want the proxy's rule only", toYAML(t, rules))
	}
}

func TestProxySecretReachesThePodOnlyAsAnEnvReference(t *testing.T) {
	in := fullInputs()
	in.route = proxiedRoute()
	in.env = append(storeSecretKeys(&in.store.Spec), routeSecretKeys(&in.route.Spec)...)
	auth := renderRouteConfig(in).Auth.TrustedProxy
	if auth == nil || auth.SecretEnv != podconfig.EnvProxySecret || auth.SecretHeader != v1alpha1.DefaultProxySecretHeader || auth.InsecureAllowAnyCaller {
		t.Fatalf("rendered trustedProxy %+v", auth)
	}
	deployment := buildRouteDeployment(in.route, "img", "h", in.env)
	found := false
	for _, env := range deployment.Spec.Template.Spec.Containers[0].Env {
		if *env.Name == podconfig.EnvProxySecret {
			found = env.ValueFrom != nil && *env.ValueFrom.SecretKeyRef.Name == "support-proxy" && *env.ValueFrom.SecretKeyRef.Key == "secret"
		}
	}
	if !found {
		t.Errorf("the Deployment does not take %s from Secret support-proxy/secret", podconfig.EnvProxySecret)
	}
}

// An ingestion pod can read its git source's credentials: the kubelet
// writes a Secret volume's files as root, with the pod's fsGroup as their
// group when it has one (and the group's read bit added), so a process
// that is not root reads them through that group or not at all. Without
// fsGroup every private git source fails with "want username/password".
func TestIngestPodCanReadItsGitCredentials(t *testing.T) {
	store := newStore("acme-rag", "docs", "http://milvus.milvus.svc:19530")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{
		{Name: "runbooks", Git: &v1alpha1.GitSource{URL: "https://git.acme.example/runbooks.git", Ref: "v2", SecretRef: &v1alpha1.LocalObjectRef{Name: "git"}}},
	}}
	pod := buildIngestPodTemplate(store, "ragroute/ragroute:v0.1.0", "h", storeSecretKeys(&store.Spec)).Spec
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Fatalf("the ingest pod runs as %+v: want a user that is not root", sc)
	}
	var mode int32 = -1
	for _, v := range pod.Volumes {
		if v.Secret != nil && *v.Secret.SecretName == "git" && v.Secret.DefaultMode != nil {
			mode = *v.Secret.DefaultMode
		}
	}
	if mode < 0 {
		t.Fatal("no git credentials volume with a mode")
	}
	// As the kubelet sets them: group fsGroup and read for it, or root's.
	fileGroup := int64(0)
	if sc.FSGroup != nil {
		fileGroup, mode = *sc.FSGroup, mode|0o040
	}
	groups := map[int64]bool{}
	if sc.RunAsGroup != nil {
		groups[*sc.RunAsGroup] = true
	}
	if sc.FSGroup != nil {
		groups[*sc.FSGroup] = true // the kubelet adds fsGroup to the process's groups
	}
	readable := mode&0o004 != 0 || (mode&0o040 != 0 && groups[fileGroup])
	if !readable {
		t.Errorf("credentials mode %o, group %d: unreadable by user %d in groups %v", mode, fileGroup, *sc.RunAsUser, groups)
	}
}
