package podconfig

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/language"
)

// RouteVersion is the schema version of RouteConfig. A runtime refuses a
// file whose version it does not know instead of guessing.
const RouteVersion = 1

// RouteFileName is the ConfigMap key and file name of the route config.
const RouteFileName = "route.json"

// RouteConfig is the effective configuration of one route: everything
// `ragroute serve` needs, every default filled in.
type RouteConfig struct {
	Version   int       `json:"version"`
	Route     RouteRef  `json:"route"`
	Server    Server    `json:"server"`
	Prompt    Prompt    `json:"prompt"`
	Store     Store     `json:"store"`
	Model     ChatModel `json:"model"`
	WebSearch *Endpoint `json:"webSearch,omitempty"`
	Window    Window    `json:"window"`
	Retrieval Retrieval `json:"retrieval"`
	Rerank    Rerank    `json:"rerank"`
	Cache     Cache     `json:"cache"`
	Turns     Turns     `json:"turns"`
	Limits    Limits    `json:"limits,omitzero"`
	Timeouts  Timeouts  `json:"timeouts,omitzero"`
	Redis     *Redis    `json:"redis,omitempty"`
	Mode      Mode      `json:"mode"`
	// ToolProtocol is how an agentic turn gets the model's tool calls
	// (empty: auto).
	ToolProtocol ToolProtocol `json:"toolProtocol,omitempty"`
	// Answer is who writes the answer.
	Answer Answer `json:"answer"`
	Auth   Auth   `json:"auth"`
	// UI is the route's own web page at GET /.
	UI UI `json:"ui"`
	// Feedback is the users' verdicts on answers; absent: off.
	Feedback Feedback `json:"feedback,omitzero"`
	// MCP is the route's Model Context Protocol endpoint at /mcp.
	MCP MCP `json:"mcp"`
}

// MCP switches the route's Model Context Protocol endpoint.
type MCP struct {
	Enabled bool `json:"enabled"`
}

// UI switches the route's web page.
type UI struct {
	Enabled bool `json:"enabled"`
}

// RouteRef names the QueryRoute a config was rendered from.
type RouteRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Answer says who writes the answer: "generative" (the chat model) or
// "extractive" (the route quotes the fragments), and how the model's
// answer is checked.
type Answer struct {
	Mode          AnswerMode    `json:"mode"`
	Grounding     Grounding     `json:"grounding"`
	Answerability Answerability `json:"answerability"`
	// WhenModelRefuses is accept, quote or askAgain (empty: accept).
	WhenModelRefuses ModelRefusal `json:"whenModelRefuses,omitempty"`
	// Judge, when set, is the model the checks ask in place of the chat
	// model (judge.go).
	Judge *Judge `json:"judge,omitempty"`
}

// Answerability is the check before the answer: the question's coverage
// by the packed fragments (not found below MinCoverage), or the chat
// model asked (below MinProbability).
type Answerability struct {
	Check          AnswerabilityCheck `json:"check"`
	MinCoverage    float64            `json:"minCoverage"`
	MinProbability float64            `json:"minProbability"`
	// RequireNames refuses a question whose names no packed fragment
	// holds; MinRelevance (0: none) one whose best packed fragment's
	// cross-encoder relevance is below it.
	RequireNames bool    `json:"requireNames,omitempty"`
	MinRelevance float64 `json:"minRelevance,omitempty"`
	// CalibratedBy names what set the thresholds, for the reports.
	CalibratedBy string `json:"calibratedBy,omitempty"`
}

// Applies says whether any rule of the check runs.
func (a Answerability) Applies() bool {
	return a.Check != "" && a.Check != AnswerabilityOff || a.RequireNames || a.MinRelevance > 0
}

// Grounding is the answer's grounding check: its policy (annotate, strip
// or fallback), the support a sentence needs, and the grounded ratio
// under which fallback replaces the answer.
type Grounding struct {
	Policy           GroundingPolicy `json:"policy"`
	SupportThreshold float64         `json:"supportThreshold"`
	FallbackBelow    float64         `json:"fallbackBelow"`
	// Scorer is similarity (also when empty) or judge.
	Scorer GroundingScorer `json:"scorer,omitempty"`
}

func (a Answerability) validate(hasModel bool) []error {
	var errs []error
	if a.MinProbability < 0 || a.MinProbability > 1 {
		errs = append(errs, fmt.Errorf("answer.answerability.minProbability %v is outside 0-1", a.MinProbability))
	}
	if a.MinCoverage < 0 || a.MinCoverage > 1 {
		errs = append(errs, fmt.Errorf("answer.answerability.minCoverage %v is outside 0-1", a.MinCoverage))
	}
	if a.MinRelevance < 0 || a.MinRelevance > 1 {
		errs = append(errs, fmt.Errorf("answer.answerability.minRelevance %v is outside 0-1", a.MinRelevance))
	}
	if a.Check == AnswerabilityModel && !hasModel {
		errs = append(errs, errors.New("answer.answerability.check model needs a chat model (model.baseURL)"))
	}
	return errs
}

// Server is where the query API listens.
type Server struct {
	Port int32 `json:"port"`
	// MetricsPort, when set, serves /healthz, /readyz and /metrics on a
	// port of their own, and Port the API only; 0: all on Port.
	MetricsPort int32 `json:"metricsPort,omitempty"`
	// CORSAllowedOrigins are the browser origins answered with CORS
	// headers; none: no CORS.
	CORSAllowedOrigins []string `json:"corsAllowedOrigins,omitempty"`
}

// Prompt is the platform layer of the route's prompt.
type Prompt struct {
	Name     string `json:"name"`
	Platform string `json:"platform"`
	NotFound string `json:"notFound"`
	// NotFoundByLanguage is the not-found wording for questions in a
	// language (language.Tag), where it is not NotFound's.
	NotFoundByLanguage map[string]string `json:"notFoundByLanguage,omitempty"`
	Styles             map[string]string `json:"styles,omitempty"`
	Hash               string            `json:"hash"`
}

// validate refuses a wording for a language the route cannot tell (it
// would never be said) and a blank wording.
func (p Prompt) validate() []error {
	var errs []error
	for _, tag := range slices.Sorted(maps.Keys(p.NotFoundByLanguage)) {
		if !language.IsSupported(tag) {
			errs = append(errs, fmt.Errorf("prompt.notFoundByLanguage: %q is not a language the route tells apart (%v)", tag, language.Supported()))
		}
		if strings.TrimSpace(p.NotFoundByLanguage[tag]) == "" {
			errs = append(errs, fmt.Errorf("prompt.notFoundByLanguage[%s] is empty", tag))
		}
	}
	return errs
}

// Store is the KnowledgeStore the route searches.
type Store struct {
	Name      string    `json:"name"`
	Milvus    Milvus    `json:"milvus"`
	Embedding Embedding `json:"embedding"`
	Search    Search    `json:"search"`
}

// Search tunes the hybrid search.
type Search struct {
	Primitives []string `json:"primitives"`
	Candidates int32    `json:"candidates"`
	RRFK       int32    `json:"rrfK"`
	// Weights of the primitives in the fusion, each one named.
	Weights map[string]float64 `json:"weights,omitempty"`
	// Lexical prepares the query of the BM25 primitives as the store's
	// ingestion prepared its text.
	Lexical Lexical `json:"lexical"`
}

// ChatModel is the model that drives the turn.
type ChatModel struct {
	BaseURL      string       `json:"baseURL"`
	Name         string       `json:"name"`
	APIKeyEnv    string       `json:"apiKeyEnv,omitempty"`
	Temperature  float64      `json:"temperature"`
	MaxTokens    int32        `json:"maxTokens,omitempty"`
	SearchPolicy SearchPolicy `json:"searchPolicy"`
	// MaxToolCallsPerRound caps the tool calls run from one reply.
	MaxToolCallsPerRound int32 `json:"maxToolCallsPerRound,omitempty"`
	// IdleTimeout ends a turn with model_timeout when the model's stream
	// sends nothing for this long (0: the runtime's default).
	IdleTimeout Duration `json:"idleTimeout,omitempty"`
}

// Endpoint is a plain HTTP endpoint with an optional API key.
type Endpoint struct {
	BaseURL   string `json:"baseURL"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
}

// Window is the context budget of one model call.
type Window struct {
	ContextTokens       int32 `json:"contextTokens"`
	AnswerReserveTokens int32 `json:"answerReserveTokens"`
}

// Retrieval filters candidates. A floor with its …Sigmas set is relative
// to the serving generation's background similarity (mean + sigmas ×
// standard deviation); its raw value then applies only while no background
// is recorded.
type Retrieval struct {
	SimilarityFloor       float64   `json:"similarityFloor"`
	SimilarityFloorSigmas *float64  `json:"similarityFloorSigmas,omitempty"`
	StrictFloor           float64   `json:"strictFloor"`
	StrictFloorSigmas     *float64  `json:"strictFloorSigmas,omitempty"`
	MaxFragments          int32     `json:"maxFragments"`
	MinConfidence         *float64  `json:"minConfidence,omitempty"`
	Diversity             Diversity `json:"diversity"`
	// Research allows one rephrased search before not found; below
	// ResearchBelow (when set) a weak best candidate triggers it too.
	// ResearchBelow, as Diversity.Margin and SimilarityFloor, is a cosine
	// in every rerank mode; only StrictFloor is a cross-encoder's
	// relevance under rerank.mode crossEncoder.
	Research      bool     `json:"research"`
	ResearchBelow *float64 `json:"researchBelow,omitempty"`
	// FlaggedFragments is keep (also when empty), drop or quarantine.
	FlaggedFragments FlaggedPolicy `json:"flaggedFragments"`
}

// Diversity bounds the fragments of one document in a turn.
type Diversity struct {
	MaxPerDocument int32   `json:"maxPerDocument"`
	Margin         float64 `json:"margin"`
	// Dominance 0 (a config from before the rule) turns it off.
	Dominance float64 `json:"dominance,omitempty"`
}

// Rerank chooses the reranker.
type Rerank struct {
	Mode         RerankMode    `json:"mode"`
	CrossEncoder *CrossEncoder `json:"crossEncoder,omitempty"`
}

// CrossEncoder is a rerank endpoint.
type CrossEncoder struct {
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	TopN    int32  `json:"topN"`
	// FirstStageWeight weighs the fused order beside the relevance.
	FirstStageWeight float64 `json:"firstStageWeight"`
	// MaxDocumentTokens cuts each fragment's text to its first N tokens
	// for the cross-encoder; 0 sends it whole.
	MaxDocumentTokens int32  `json:"maxDocumentTokens,omitempty"`
	APIKeyEnv         string `json:"apiKeyEnv,omitempty"`
}

// Cache configures the exact cache.
type Cache struct {
	Backend    Backend  `json:"backend"`
	TTL        Duration `json:"ttl"`
	MaxEntries int32    `json:"maxEntries"`
}

// Turns configures the turn event log.
type Turns struct {
	Backend   Backend  `json:"backend"`
	Retention Duration `json:"retention"`
	// MaxMemoryBytes bounds the memory backend's events of all turns
	// together; 0 takes the runtime's default (turnlog.DefaultMaxBytes).
	MaxMemoryBytes int64 `json:"maxMemoryBytes,omitempty"`
}

// Limits bound the turns one user, and the replica, may run; a field left
// at zero takes the runtime's default. A search counts as a turn.
type Limits struct {
	// ConcurrentTurnsPerUser: one user's turns running at once (more: 429).
	ConcurrentTurnsPerUser int32 `json:"concurrentTurnsPerUser,omitempty"`
	// TurnsPerMinutePerUser: one user's sustained rate (more: 429).
	TurnsPerMinutePerUser int32 `json:"turnsPerMinutePerUser,omitempty"`
	// MaxInFlightTurns: the replica's turns running at once (more: 503).
	MaxInFlightTurns int32 `json:"maxInFlightTurns,omitempty"`
	// MaxSearchesInFlight: the replica's knowledge-store calls running at
	// once (more wait for a slot, outside timeouts.search).
	MaxSearchesInFlight int32 `json:"maxSearchesInFlight,omitempty"`
}

// Timeouts are the deadlines of a search's I/O steps; a field left at zero
// takes the runtime's default.
type Timeouts struct {
	// Embed bounds embedding the query.
	Embed Duration `json:"embed,omitempty"`
	// Search bounds the Milvus hybrid search (and the parts lookup of
	// split sections).
	Search Duration `json:"search,omitempty"`
	// Rerank bounds the cross-encoder call.
	Rerank Duration `json:"rerank,omitempty"`
}

// Redis says how to reach the shared Redis.
type Redis struct {
	Address string `json:"address"`
	DB      int32  `json:"db,omitempty"`
	// Username is the ACL user; empty: the default user.
	Username    string    `json:"username,omitempty"`
	PasswordEnv string    `json:"passwordEnv,omitempty"`
	TLS         *RedisTLS `json:"tls,omitempty"`
	// SealKeyEnv holds the secret every value kept in Redis is sealed
	// with (seal.MinSecretBytes or more).
	SealKeyEnv string `json:"sealKeyEnv"`
}

// RedisTLS verifies Redis' certificate against the PEM CAs read from
// CAEnv (the system's roots when empty) and ServerName (the address's host
// when empty).
type RedisTLS struct {
	CAEnv      string `json:"caEnv,omitempty"`
	ServerName string `json:"serverName,omitempty"`
}

// validate checks what a Redis client needs.
func (r Redis) validate() []error {
	var errs []error
	if r.Address == "" {
		errs = append(errs, errors.New("redis.address is required"))
	}
	if r.SealKeyEnv == "" {
		errs = append(errs, errors.New("redis.sealKeyEnv is required: the route seals every value it keeps in Redis"))
	}
	if r.Username != "" && r.PasswordEnv == "" {
		errs = append(errs, errors.New("redis.username needs redis.passwordEnv: an ACL user logs in with its password"))
	}
	return errs
}

// Auth establishes identities: exactly one of JWT or TrustedProxy.
type Auth struct {
	JWT          *JWT          `json:"jwt,omitempty"`
	TrustedProxy *TrustedProxy `json:"trustedProxy,omitempty"`
}

// JWT verifies bearer tokens. An empty JWKSURL finds the keys by OpenID
// discovery: the jwks_uri of <Issuer>/.well-known/openid-configuration.
type JWT struct {
	Issuer      string `json:"issuer"`
	Audience    string `json:"audience"`
	JWKSURL     string `json:"jwksURL,omitempty"`
	UserClaim   string `json:"userClaim"`
	GroupsClaim string `json:"groupsClaim"`
}

// TrustedProxy reads identity headers. The proxy proves itself with the
// shared secret read from SecretEnv, sent in SecretHeader; a route without
// one must say InsecureAllowAnyCaller.
type TrustedProxy struct {
	UserHeader             string `json:"userHeader"`
	GroupsHeader           string `json:"groupsHeader"`
	SecretHeader           string `json:"secretHeader,omitempty"`
	SecretEnv              string `json:"secretEnv,omitempty"`
	InsecureAllowAnyCaller bool   `json:"insecureAllowAnyCaller,omitempty"`
}

// Validate checks what the runtime relies on and the CRD schema cannot
// express once the config left the API server.
func (c RouteConfig) Validate() error {
	var errs []error
	if c.Version != RouteVersion {
		errs = append(errs, fmt.Errorf("version %d is not supported (want %d)", c.Version, RouteVersion))
	}
	if c.Store.Milvus.URI == "" || c.Store.Milvus.Collection == "" {
		errs = append(errs, errors.New("store.milvus.uri and store.milvus.collection are required"))
	}
	switch {
	case c.Model.BaseURL != "" && c.Model.Name != "":
	case c.Model.BaseURL != "" || c.Model.Name != "":
		errs = append(errs, errors.New("model.baseURL and model.name go together"))
	case c.Answer.Mode != AnswerExtractive || c.Model.SearchPolicy != SearchAlways || c.Mode == ModeAgentic:
		errs = append(errs, errors.New("model.baseURL and model.name are required unless answer.mode is extractive with searchPolicy always in singleRound mode"))
	}
	if err := c.Server.validatePorts(); err != nil {
		errs = append(errs, err)
	}
	if c.Window.AnswerReserveTokens >= c.Window.ContextTokens {
		errs = append(errs, fmt.Errorf("window.answerReserveTokens (%d) must be less than window.contextTokens (%d)",
			c.Window.AnswerReserveTokens, c.Window.ContextTokens))
	}
	if (c.Auth.JWT == nil) == (c.Auth.TrustedProxy == nil) {
		errs = append(errs, errors.New("auth needs exactly one of jwt or trustedProxy"))
	}
	if j := c.Auth.JWT; j != nil {
		errs = append(errs, j.validateURLs()...)
	}
	if p := c.Auth.TrustedProxy; p != nil {
		switch {
		case (p.SecretEnv == "") == !p.InsecureAllowAnyCaller:
			errs = append(errs, errors.New("auth.trustedProxy needs exactly one of secretEnv (a shared proxy secret) or insecureAllowAnyCaller"))
		case p.SecretEnv != "" && p.SecretHeader == "":
			errs = append(errs, errors.New("auth.trustedProxy.secretHeader is required with secretEnv"))
		}
	}
	errs = append(errs, c.Prompt.validate()...)
	if err := c.Store.Search.validateWeights(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Store.Search.Lexical.Validate("store.search.lexical")...)
	errs = append(errs, c.validateEnums()...)
	errs = append(errs, c.Answer.Answerability.validate(c.Model.BaseURL != "")...)
	errs = append(errs, c.Answer.validateJudge()...)
	if (c.Cache.Backend == BackendRedis || c.Turns.Backend == BackendRedis) && c.Redis == nil {
		errs = append(errs, errors.New("a redis backend needs redis.address"))
	}
	if c.Redis != nil {
		errs = append(errs, c.Redis.validate()...)
	}
	if c.Rerank.Mode == RerankCrossEncoder && c.Rerank.CrossEncoder == nil {
		errs = append(errs, errors.New("rerank.mode crossEncoder needs rerank.crossEncoder"))
	}
	if ce := c.Rerank.CrossEncoder; ce != nil && (ce.FirstStageWeight < 0 || ce.FirstStageWeight > 10) {
		errs = append(errs, fmt.Errorf("rerank.crossEncoder.firstStageWeight %g is outside [0, 10]", ce.FirstStageWeight))
	}
	if ce := c.Rerank.CrossEncoder; ce != nil && (ce.MaxDocumentTokens < 0 || ce.MaxDocumentTokens > 4096) {
		errs = append(errs, fmt.Errorf("rerank.crossEncoder.maxDocumentTokens %d is outside [0, 4096] (0: the whole fragment)", ce.MaxDocumentTokens))
	}
	if c.Retrieval.StrictFloorSigmas != nil && c.Rerank.Mode == RerankCrossEncoder {
		errs = append(errs, errors.New("retrieval.strictFloorSigmas needs rerank.mode rrf: a cross-encoder's relevance is not a cosine"))
	}
	errs = append(errs, c.Feedback.validate()...)
	if c.Turns.MaxMemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("turns.maxMemoryBytes %d is negative (0 takes the default)", c.Turns.MaxMemoryBytes))
	}
	for _, l := range []struct {
		name  string
		value int32
	}{{"concurrentTurnsPerUser", c.Limits.ConcurrentTurnsPerUser}, {"turnsPerMinutePerUser", c.Limits.TurnsPerMinutePerUser},
		{"maxInFlightTurns", c.Limits.MaxInFlightTurns}, {"maxSearchesInFlight", c.Limits.MaxSearchesInFlight}} {
		if l.value < 0 {
			errs = append(errs, fmt.Errorf("limits.%s %d is negative: a limit is at least 1 (0 takes the default)", l.name, l.value))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid route config: %w", err)
	}
	return nil
}

// validateEnums refuses a value the runtime does not know; where empty
// is allowed it takes the default (modelDecides, rrf, memory, keep,
// generative, annotate), as configs written before the field had it.
func (c RouteConfig) validateEnums() []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(oneOf("mode", c.Mode, ModeSingleRound, ModeAgentic))
	add(oneOf("toolProtocol", c.ToolProtocol, "", ToolProtocolAuto, ToolProtocolNative, ToolProtocolJSON))
	add(oneOf("model.searchPolicy", c.Model.SearchPolicy, "", SearchModelDecides, SearchAlways))
	add(oneOf("rerank.mode", c.Rerank.Mode, "", RerankRRF, RerankCrossEncoder))
	add(CheckTokenizer(c.Store.Embedding.Tokenizer))
	add(oneOf("cache.backend", c.Cache.Backend, "", BackendMemory, BackendRedis))
	add(oneOf("turns.backend", c.Turns.Backend, "", BackendMemory, BackendRedis))
	add(oneOf("retrieval.flaggedFragments", c.Retrieval.FlaggedFragments, "", FlaggedKeep, FlaggedDrop, FlaggedQuarantine))
	add(oneOf("answer.mode", c.Answer.Mode, "", AnswerGenerative, AnswerExtractive))
	add(oneOf("answer.grounding.policy", c.Answer.Grounding.Policy, "", GroundingAnnotate, GroundingStrip, GroundingFallback))
	add(oneOf("answer.grounding.scorer", c.Answer.Grounding.Scorer, "", GroundingSimilarity, GroundingJudge))
	add(oneOf("answer.answerability.check", c.Answer.Answerability.Check, "", AnswerabilityOff, AnswerabilityCoverage, AnswerabilityModel))
	add(oneOf("answer.whenModelRefuses", c.Answer.WhenModelRefuses, "", RefusalAccept, RefusalQuote, RefusalAskAgain))
	return errs
}

// validatePorts: two ports that a listener can take (MetricsPort may be
// unset), never the same one.
func (s Server) validatePorts() error {
	switch {
	case s.Port < 0 || s.Port > 65535:
		return fmt.Errorf("server.port %d is not a TCP port (1-65535)", s.Port)
	case s.MetricsPort < 0 || s.MetricsPort > 65535:
		return fmt.Errorf("server.metricsPort %d is outside 1-65535 (0: metrics on server.port)", s.MetricsPort)
	case s.MetricsPort != 0 && s.MetricsPort == s.Port:
		return fmt.Errorf("server.metricsPort %d is server.port: give it another port, or 0 to serve metrics on server.port", s.MetricsPort)
	}
	return nil
}

// validateWeights: no negative weight, and a search that searches
// something. No weights at all weighs every primitive alike.
func (s Search) validateWeights() error {
	if len(s.Weights) == 0 {
		return nil
	}
	used := false
	for p, w := range s.Weights {
		if w < 0 {
			return fmt.Errorf("store.search.weights.%s is %g; weights are at least 0", p, w)
		}
		used = used || (w > 0 && (len(s.Primitives) == 0 || slices.Contains(s.Primitives, p)))
	}
	if !used {
		return errors.New("store.search.weights leave no searched primitive above 0")
	}
	return nil
}
