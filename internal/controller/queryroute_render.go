package controller

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// routePort is where `ragroute serve` serves the query API in route pods;
// routeMetricsPort is where it serves /healthz, /readyz and /metrics, so
// the kubelet and Prometheus never need the API's port, nor it theirs.
const (
	routePort        = 8080
	routeMetricsPort = 8081
)

// The route pods' named ports.
const (
	routePortName        = "http"
	routeMetricsPortName = "metrics"
)

// routeInputs is everything a route's effective configuration is made of.
type routeInputs struct {
	route      *v1alpha1.QueryRoute
	store      *v1alpha1.KnowledgeStore
	promptName string
	prompt     promptContent
	// secrets are the Secrets whose keys reach the pod; their versions are
	// part of the config hash so that rotating a key rolls the pods.
	secrets []*corev1.Secret
	// env maps each secret-carrying environment variable to its key.
	env []secretUse
}

// renderRouteConfig is the pure rendering of a route's effective config,
// every default filled in, so that the file alone says what a pod runs.
func renderRouteConfig(in routeInputs) podconfig.RouteConfig {
	spec, store := &in.route.Spec, &in.store.Spec
	cfg := podconfig.RouteConfig{
		Version: podconfig.RouteVersion,
		Route:   podconfig.RouteRef{Name: in.route.Name, Namespace: in.route.Namespace},
		Server:  podconfig.Server{Port: routePort, MetricsPort: routeMetricsPort},
		Prompt: podconfig.Prompt{
			Name:               in.promptName,
			Platform:           in.prompt.Platform,
			NotFound:           in.prompt.NotFound,
			NotFoundByLanguage: in.prompt.NotFoundByLanguage,
			Styles:             in.prompt.Styles,
			Hash:               in.prompt.Hash(),
		},
		Store: podconfig.Store{
			Name:      in.store.Name,
			Milvus:    renderMilvus(in.store),
			Embedding: renderEmbedding(store),
			Search:    renderSearch(store.Search),
		},
		Model: renderModel(spec.Model),
		Window: podconfig.Window{
			ContextTokens:       spec.Window.ContextTokens,
			AnswerReserveTokens: spec.Window.AnswerReserveTokens,
		},
		Retrieval:    renderRetrieval(spec.Retrieval, spec.Rerank != nil && spec.Rerank.Mode == v1alpha1.RerankCrossEncoder),
		Rerank:       renderRerank(spec.Rerank),
		Cache:        renderCache(spec.Cache),
		Turns:        renderTurns(spec.Turns),
		Limits:       renderLimits(spec.Limits),
		Timeouts:     renderTimeouts(spec.Timeouts),
		Mode:         podconfig.Mode(cmp.Or(spec.Mode, v1alpha1.ModeSingleRound)),
		ToolProtocol: renderToolProtocol(spec),
		Auth:         renderAuth(spec.Auth),
	}
	cfg.Answer = renderAnswer(spec.Answer)
	cfg.UI.Enabled = spec.UI == nil || spec.UI.Enabled == nil || *spec.UI.Enabled
	cfg.Feedback = renderFeedback(spec.Feedback)
	cfg.MCP.Enabled = spec.MCP == nil || spec.MCP.Enabled == nil || *spec.MCP.Enabled
	if c := spec.CORS; c != nil {
		cfg.Server.CORSAllowedOrigins = c.AllowedOrigins
	}
	if ws := spec.WebSearch; ws != nil {
		cfg.WebSearch = &podconfig.Endpoint{BaseURL: ws.BaseURL, APIKeyEnv: envFor(ws.APIKeySecretRef, podconfig.EnvWebSearchAPIKey)}
	}
	cfg.Redis = renderRedis(spec.Redis)
	return cfg
}

// renderRedis is the route's Redis connection, its secrets named by the
// variables that carry them.
func renderRedis(r *v1alpha1.RedisConnection) *podconfig.Redis {
	if r == nil {
		return nil
	}
	out := &podconfig.Redis{Address: r.Address, DB: r.DB, Username: r.Username,
		PasswordEnv: envFor(r.PasswordSecretRef, podconfig.EnvRedisPassword), SealKeyEnv: podconfig.EnvRedisSealKey}
	if t := r.TLS; t != nil {
		out.TLS = &podconfig.RedisTLS{CAEnv: envFor(t.CASecretRef, podconfig.EnvRedisCA), ServerName: t.ServerName}
	}
	return out
}

// renderModel is the chat model; a route without one (extractive
// answers) searches every question.
func renderModel(m *v1alpha1.ChatModel) podconfig.ChatModel {
	if m == nil {
		return podconfig.ChatModel{SearchPolicy: podconfig.SearchAlways}
	}
	return podconfig.ChatModel{
		BaseURL:              m.BaseURL,
		Name:                 m.Name,
		APIKeyEnv:            envFor(m.APIKeySecretRef, podconfig.EnvModelAPIKey),
		Temperature:          orDefault(m.Temperature, v1alpha1.DefaultTemperature),
		MaxTokens:            m.MaxTokens,
		SearchPolicy:         podconfig.SearchPolicy(cmp.Or(m.SearchPolicy, v1alpha1.SearchPolicyModelDecides)),
		MaxToolCallsPerRound: cmp.Or(m.MaxToolCallsPerRound, v1alpha1.DefaultMaxToolCalls),
		IdleTimeout:          durationOr(m.IdleTimeout, podconfig.Duration(v1alpha1.DefaultModelIdleTimeout)),
	}
}

func renderAnswer(a *v1alpha1.AnswerSettings) podconfig.Answer {
	out := podconfig.Answer{Mode: podconfig.AnswerMode(v1alpha1.AnswerGenerative), Grounding: podconfig.Grounding{Policy: podconfig.GroundingPolicy(v1alpha1.GroundingAnnotate),
		SupportThreshold: v1alpha1.DefaultGroundingThreshold, FallbackBelow: v1alpha1.DefaultFallbackBelow},
		Answerability: podconfig.Answerability{Check: podconfig.AnswerabilityCheck(v1alpha1.AnswerabilityOff),
			MinCoverage: v1alpha1.DefaultAnswerabilityMinCoverage, MinProbability: v1alpha1.DefaultAnswerabilityMinProbability}}
	if a == nil {
		return out
	}
	out.Mode = cmp.Or(podconfig.AnswerMode(a.Mode), out.Mode)
	out.WhenModelRefuses = podconfig.ModelRefusal(a.WhenModelRefuses)
	if g := a.Grounding; g != nil {
		out.Grounding.Policy = cmp.Or(podconfig.GroundingPolicy(g.Policy), out.Grounding.Policy)
		out.Grounding.SupportThreshold = orDefault(g.SupportThreshold, out.Grounding.SupportThreshold)
		out.Grounding.FallbackBelow = orDefault(g.FallbackBelow, out.Grounding.FallbackBelow)
		// Only the judge is rendered: similarity is what an empty scorer
		// reads, so a route that names it keeps its config (and its pods).
		if g.Scorer == v1alpha1.GroundingJudge {
			out.Grounding.Scorer = podconfig.GroundingJudge
		}
	}
	if j := a.Judge; j != nil {
		out.Judge = &podconfig.Judge{BaseURL: j.BaseURL, Name: j.Name, APIKeyEnv: envFor(j.APIKeySecretRef, podconfig.EnvJudgeAPIKey),
			CalibratedBy: j.CalibratedBy}
	}
	if c := a.Answerability; c != nil {
		out.Answerability.Check = cmp.Or(podconfig.AnswerabilityCheck(c.Check), out.Answerability.Check)
		out.Answerability.MinCoverage = orDefault(c.MinCoverage, out.Answerability.MinCoverage)
		out.Answerability.MinProbability = orDefault(c.MinProbability, out.Answerability.MinProbability)
		out.Answerability.RequireNames = c.Names == v1alpha1.AnswerabilityNamesRequire
		out.Answerability.MinRelevance = orDefault(c.MinRelevance, 0)
		out.Answerability.CalibratedBy = c.CalibratedBy
	}
	return out
}

func renderSearch(s *v1alpha1.SearchSettings) podconfig.Search {
	out := podconfig.Search{Candidates: v1alpha1.DefaultCandidates, RRFK: v1alpha1.DefaultRRFK}
	primitives := v1alpha1.AllSearchPrimitives
	if s != nil {
		out.Candidates = cmp.Or(s.Candidates, out.Candidates)
		out.RRFK = cmp.Or(s.RRFK, out.RRFK)
		if len(s.Primitives) > 0 {
			primitives = s.Primitives
		}
	}
	var weights *v1alpha1.SearchWeights
	if s != nil {
		weights = s.Weights
	}
	out.Weights = map[string]float64{}
	for _, p := range primitives {
		out.Primitives = append(out.Primitives, string(p))
		out.Weights[string(p)] = searchWeight(weights, p)
	}
	slices.Sort(out.Primitives) // a set: order must not change the hash
	out.Lexical = renderLexical(s)
	return out
}

// searchWeight is a primitive's fusion weight, written or default.
func searchWeight(w *v1alpha1.SearchWeights, p v1alpha1.SearchPrimitive) float64 {
	def := v1alpha1.DefaultSearchWeights[p]
	if w == nil {
		return def
	}
	switch p {
	case v1alpha1.PrimitiveTextDense:
		return orDefault(w.TextDense, def)
	case v1alpha1.PrimitiveTextSparse:
		return orDefault(w.TextSparse, def)
	case v1alpha1.PrimitiveTitleDense:
		return orDefault(w.TitleDense, def)
	case v1alpha1.PrimitiveTitleSparse:
		return orDefault(w.TitleSparse, def)
	}
	return def
}

// renderRetrieval renders the retrieval settings; crossEncoder says the
// strict floor applies to a cross-encoder's relevance.
func renderRetrieval(r *v1alpha1.RetrievalSettings, crossEncoder bool) podconfig.Retrieval {
	strict := v1alpha1.DefaultStrictFloor
	if crossEncoder {
		strict = v1alpha1.DefaultCrossEncoderStrictFloor
	}
	out := podconfig.Retrieval{
		SimilarityFloor: v1alpha1.DefaultSimilarityFloor,
		StrictFloor:     strict,
		MaxFragments:    v1alpha1.DefaultMaxFragments,
		Diversity: podconfig.Diversity{MaxPerDocument: v1alpha1.DefaultMaxPerDocument, Margin: v1alpha1.DefaultDiversityMargin,
			Dominance: v1alpha1.DefaultDominance},
		Research:         true,
		FlaggedFragments: podconfig.FlaggedPolicy(v1alpha1.FlaggedKeep),
	}
	if r != nil {
		if r.Research != nil {
			out.Research = *r.Research
		}
		out.ResearchBelow = r.ResearchBelow
		out.FlaggedFragments = cmp.Or(podconfig.FlaggedPolicy(r.FlaggedFragments), out.FlaggedFragments)
		// A relative floor keeps the raw default beside it: the floor in
		// force until the store's background similarity is recorded.
		out.SimilarityFloor = orDefault(r.SimilarityFloor, out.SimilarityFloor)
		out.SimilarityFloorSigmas = r.SimilarityFloorSigmas
		out.StrictFloor = orDefault(r.StrictFloor, out.StrictFloor)
		out.StrictFloorSigmas = r.StrictFloorSigmas
		out.MaxFragments = cmp.Or(r.MaxFragments, out.MaxFragments)
		out.MinConfidence = r.MinConfidence
		if d := r.Diversity; d != nil {
			out.Diversity.MaxPerDocument = cmp.Or(d.MaxPerDocument, out.Diversity.MaxPerDocument)
			out.Diversity.Margin = orDefault(d.Margin, out.Diversity.Margin)
			out.Diversity.Dominance = orDefault(d.Dominance, out.Diversity.Dominance)
		}
	}
	return out
}

func renderRerank(r *v1alpha1.RerankSettings) podconfig.Rerank {
	if r == nil {
		return podconfig.Rerank{Mode: podconfig.RerankRRF}
	}
	out := podconfig.Rerank{Mode: podconfig.RerankMode(cmp.Or(r.Mode, v1alpha1.RerankRRF))}
	// The cross-encoder endpoint only matters when it is the mode in use.
	if ce := r.CrossEncoder; ce != nil && out.Mode == podconfig.RerankCrossEncoder {
		out.CrossEncoder = &podconfig.CrossEncoder{
			BaseURL:           ce.BaseURL,
			Model:             ce.Model,
			TopN:              cmp.Or(ce.TopN, v1alpha1.DefaultCrossEncoderTopN),
			FirstStageWeight:  orDefault(ce.FirstStageWeight, v1alpha1.DefaultCrossEncoderFirstStageWeight),
			MaxDocumentTokens: orDefault(ce.MaxDocumentTokens, v1alpha1.DefaultCrossEncoderMaxDocumentTokens),
			APIKeyEnv:         envFor(ce.APIKeySecretRef, podconfig.EnvRerankAPIKey),
		}
	}
	return out
}

func renderCache(c *v1alpha1.CacheSettings) podconfig.Cache {
	out := podconfig.Cache{
		Backend:    podconfig.BackendMemory,
		TTL:        podconfig.Duration(v1alpha1.DefaultCacheTTL),
		MaxEntries: v1alpha1.DefaultCacheMaxEntries,
	}
	if c != nil {
		out.Backend = podconfig.Backend(cmp.Or(c.Backend, v1alpha1.BackendMemory))
		out.TTL = durationOr(c.TTL, out.TTL)
		out.MaxEntries = orDefault(c.MaxEntries, out.MaxEntries)
	}
	return out
}

func renderTurns(t *v1alpha1.TurnSettings) podconfig.Turns {
	out := podconfig.Turns{Backend: podconfig.BackendMemory, Retention: podconfig.Duration(v1alpha1.DefaultTurnRetention),
		MaxMemoryBytes: v1alpha1.DefaultTurnMaxMemoryMiB << 20}
	if t != nil {
		out.Backend = podconfig.Backend(cmp.Or(t.Backend, v1alpha1.BackendMemory))
		out.Retention = durationOr(t.Retention, out.Retention)
		out.MaxMemoryBytes = int64(cmp.Or(t.MaxMemoryMiB, v1alpha1.DefaultTurnMaxMemoryMiB)) << 20
	}
	return out
}

func renderLimits(l *v1alpha1.RouteLimits) podconfig.Limits {
	out := podconfig.Limits{
		ConcurrentTurnsPerUser: v1alpha1.DefaultConcurrentTurnsPerUser,
		TurnsPerMinutePerUser:  v1alpha1.DefaultTurnsPerMinutePerUser,
		MaxInFlightTurns:       v1alpha1.DefaultMaxInFlightTurns,
		MaxSearchesInFlight:    v1alpha1.DefaultMaxSearchesInFlight,
	}
	if l != nil {
		out.ConcurrentTurnsPerUser = cmp.Or(l.ConcurrentTurnsPerUser, out.ConcurrentTurnsPerUser)
		out.TurnsPerMinutePerUser = cmp.Or(l.TurnsPerMinutePerUser, out.TurnsPerMinutePerUser)
		out.MaxInFlightTurns = cmp.Or(l.MaxInFlightTurns, out.MaxInFlightTurns)
		out.MaxSearchesInFlight = cmp.Or(l.MaxSearchesInFlight, out.MaxSearchesInFlight)
	}
	return out
}

func renderTimeouts(t *v1alpha1.RouteTimeouts) podconfig.Timeouts {
	out := podconfig.Timeouts{
		Embed:  podconfig.Duration(v1alpha1.DefaultEmbedTimeout),
		Search: podconfig.Duration(v1alpha1.DefaultSearchTimeout),
		Rerank: podconfig.Duration(v1alpha1.DefaultRerankTimeout),
	}
	if t != nil {
		out.Embed = durationOr(t.Embed, out.Embed)
		out.Search = durationOr(t.Search, out.Search)
		out.Rerank = durationOr(t.Rerank, out.Rerank)
	}
	return out
}

func renderAuth(a v1alpha1.RouteAuth) podconfig.Auth {
	var out podconfig.Auth
	if j := a.JWT; j != nil {
		out.JWT = &podconfig.JWT{
			Issuer:      j.Issuer,
			Audience:    j.Audience,
			JWKSURL:     j.JWKSURL, // empty: the route uses OpenID discovery
			UserClaim:   cmp.Or(j.UserClaim, v1alpha1.DefaultJWTUserClaim),
			GroupsClaim: cmp.Or(j.GroupsClaim, v1alpha1.DefaultJWTGroupsClaim),
		}
	}
	if p := a.TrustedProxy; p != nil {
		out.TrustedProxy = &podconfig.TrustedProxy{
			UserHeader:             cmp.Or(p.UserHeader, v1alpha1.DefaultProxyUserHeader),
			GroupsHeader:           cmp.Or(p.GroupsHeader, v1alpha1.DefaultProxyGroupsHeader),
			InsecureAllowAnyCaller: p.InsecureAllowAnyCaller,
		}
		if p.SecretRef != nil {
			out.TrustedProxy.SecretHeader = cmp.Or(p.SecretHeader, v1alpha1.DefaultProxySecretHeader)
			out.TrustedProxy.SecretEnv = podconfig.EnvProxySecret
		}
	}
	return out
}

// routeConfigHash identifies what a pod runs: the rendered config and the
// versions of the Secrets it reads keys from (never their values).
func routeConfigHash(configData []byte, secrets []*corev1.Secret) string {
	var b strings.Builder
	b.Write(configData)
	sorted := slices.SortedFunc(slices.Values(secrets), func(a, b *corev1.Secret) int { return cmp.Compare(a.Name, b.Name) })
	for _, s := range sorted {
		b.WriteString("\nsecret " + s.Name + " " + string(s.UID) + " " + s.ResourceVersion)
	}
	return shortHash([]byte(b.String()))
}

// marshalRouteConfig renders the config file.
func marshalRouteConfig(cfg podconfig.RouteConfig) ([]byte, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &referenceError{Reason: v1alpha1.ReasonRenderFailed, Message: err.Error()}
	}
	return podconfig.Marshal(cfg)
}

// renderToolProtocol is the agentic harness's tool protocol, auto when
// unset (only an agentic route renders one).
func renderToolProtocol(spec *v1alpha1.QueryRouteSpec) podconfig.ToolProtocol {
	if spec.Mode != v1alpha1.ModeAgentic {
		return ""
	}
	if spec.Agentic != nil && spec.Agentic.ToolProtocol != "" {
		return podconfig.ToolProtocol(spec.Agentic.ToolProtocol)
	}
	return podconfig.ToolProtocolAuto
}

// RenderRoute is the config the operator renders for route over store
// and prompt, every default filled in, as the route's pods load it. The
// evaluations and benchmarks run it, so that what they measure is what
// ships. The prompt's text must be inline (textFrom needs the cluster);
// Secret-carried keys are named by the variables a pod would have.
func RenderRoute(route *v1alpha1.QueryRoute, store *v1alpha1.KnowledgeStore, prompt *v1alpha1.PlatformPrompt) (podconfig.RouteConfig, error) {
	if prompt.Spec.TextFrom != nil {
		return podconfig.RouteConfig{}, fmt.Errorf("PlatformPrompt %s: spec.textFrom needs the cluster; write the text inline", prompt.Name)
	}
	content := inlinePrompt(prompt)
	if err := validatePromptText(content.Platform); err != nil {
		return podconfig.RouteConfig{}, fmt.Errorf("PlatformPrompt %s: %w", prompt.Name, err)
	}
	cfg := renderRouteConfig(routeInputs{route: route, store: store, promptName: prompt.Name, prompt: content})
	if err := cfg.Validate(); err != nil {
		return podconfig.RouteConfig{}, fmt.Errorf("QueryRoute %s: %w", route.Name, err)
	}
	return cfg, nil
}
