package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// QueryRouteSpec assigns a chat model, a KnowledgeStore and a PlatformPrompt
// to a served route, with its context budget and retrieval settings.
// +kubebuilder:validation:XValidation:rule="self.window.answerReserveTokens < self.window.contextTokens",message="window.answerReserveTokens must be less than window.contextTokens",fieldPath=".window.answerReserveTokens",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.model) || (has(self.answer) && self.answer.mode == 'extractive' && self.mode != 'agentic')",message="model is required unless answer.mode is extractive (and mode is not agentic): a route without a model searches every question and quotes the fragments",fieldPath=".model",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.model) || !has(self.model.maxTokens) || self.model.maxTokens <= self.window.answerReserveTokens",message="model.maxTokens must not exceed window.answerReserveTokens",fieldPath=".model.maxTokens",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || self.autoscaling.maxReplicas <= 1 || (has(self.turns) && self.turns.backend == 'redis')",message="autoscaling above one replica needs turns.backend redis, so any replica can stream any turn",fieldPath=".autoscaling.maxReplicas",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas <= 1 || (has(self.turns) && self.turns.backend == 'redis')",message="more than one replica needs turns.backend redis, so any replica can stream any turn",fieldPath=".replicas",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="(!has(self.turns) || self.turns.backend != 'redis') && (!has(self.cache) || self.cache.backend != 'redis') || has(self.redis)",message="redis must be set when cache.backend or turns.backend is redis",fieldPath=".redis",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.retrieval) || !has(self.retrieval.strictFloorSigmas) || !has(self.rerank) || !has(self.rerank.mode) || self.rerank.mode != 'crossEncoder'",message="retrieval.strictFloorSigmas needs rerank.mode rrf: a cross-encoder's relevance is not a cosine; set retrieval.strictFloor",fieldPath=".retrieval.strictFloorSigmas",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.retrieval) || has(self.retrieval.similarityFloorSigmas) || has(self.retrieval.strictFloorSigmas) || (has(self.rerank) && has(self.rerank.mode) && self.rerank.mode == 'crossEncoder') || (has(self.retrieval.similarityFloor) ? self.retrieval.similarityFloor : 0.2) <= (has(self.retrieval.strictFloor) ? self.retrieval.strictFloor : 0.35)",message="similarityFloor must not exceed strictFloor (both cosines unless rerank.mode is crossEncoder)",fieldPath=".retrieval.similarityFloor",reason=FieldValueInvalid
type QueryRouteSpec struct {
	// KnowledgeStoreRef names the KnowledgeStore searched by this route.
	// +required
	KnowledgeStoreRef LocalObjectRef `json:"knowledgeStoreRef"`

	// PlatformPromptRef names the PlatformPrompt on top of every answer.
	// +required
	PlatformPromptRef LocalObjectRef `json:"platformPromptRef"`

	// Model is the chat model that decides to search and writes the answer.
	// Optional only with answer.mode extractive: a route without a model
	// searches every question once, as asked (searchPolicy always, no
	// re-search), and quotes the fragments, with no model call at all.
	// +optional
	Model *ChatModel `json:"model,omitempty"`

	// WebSearch offers the model a web_search tool next to search_knowledge.
	// +optional
	WebSearch *WebSearch `json:"webSearch,omitempty"`

	// Window is the model's context budget.
	// +required
	Window ContextWindow `json:"window"`

	// Retrieval filters the fused candidates.
	// +optional
	Retrieval *RetrievalSettings `json:"retrieval,omitempty"`

	// Rerank orders the candidates that passed the similarity floor.
	// +optional
	Rerank *RerankSettings `json:"rerank,omitempty"`

	// Cache is the exact cache in front of embed and retrieve.
	// +optional
	Cache *CacheSettings `json:"cache,omitempty"`

	// Turns says where the event log of each turn lives.
	// +optional
	Turns *TurnSettings `json:"turns,omitempty"`

	// Redis is the shared store used by the redis cache and turn backends.
	// +optional
	Redis *RedisConnection `json:"redis,omitempty"`

	// Limits bound the turns one user, and each replica, may run, so that
	// one user cannot lock everyone out.
	// +optional
	Limits *RouteLimits `json:"limits,omitempty"`

	// Timeouts bound each I/O step of a knowledge search, so that a dead
	// backend ends the turn with knowledge_unavailable at once.
	// +optional
	Timeouts *RouteTimeouts `json:"timeouts,omitempty"`

	// Mode is singleRound (one round of tools) or agentic (multi-round harness).
	// +optional
	// +kubebuilder:default=singleRound
	Mode RouteMode `json:"mode,omitempty"`

	// Agentic tunes mode agentic.
	// +optional
	Agentic *AgenticSettings `json:"agentic,omitempty"`

	// Answer says who writes the answer.
	// +optional
	Answer *AnswerSettings `json:"answer,omitempty"`

	// CORS lets browser pages of these origins call the route directly.
	// Unset: no CORS headers, browsers refuse cross-origin calls.
	// +optional
	CORS *RouteCORS `json:"cors,omitempty"`

	// UI is the route's web page (GET /): ask, and watch the answer stream
	// with its sources. On unless ui.enabled is false.
	// +optional
	UI *RouteUI `json:"ui,omitempty"`

	// Feedback is the users' thumbs up or down on answers, kept for
	// evaluation (RouteFeedback). On unless feedback.enabled is false.
	// +optional
	Feedback *RouteFeedback `json:"feedback,omitempty"`
	// MCP serves the route's knowledge to agents (kagent, Claude Desktop,
	// IDEs, agent SDKs) as Model Context Protocol tools at /mcp on the
	// API's port. On unless mcp.enabled is false.
	// +optional
	MCP *RouteMCP `json:"mcp,omitempty"`

	// Auth says how a request's identity is established. Requests without
	// an identity are refused; there is no unfiltered search.
	// +required
	Auth RouteAuth `json:"auth"`

	// Replicas of the route Deployment.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`

	// Resources of the serving container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Image overrides the operator's default route image.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// Pod sets the metadata and scheduling of the route's pods.
	// +optional
	Pod *RoutePodSettings `json:"pod,omitempty"`

	// DisruptionBudget, when set, renders a PodDisruptionBudget for the
	// route's pods, so a node drain keeps some serving.
	// +optional
	DisruptionBudget *RouteDisruptionBudget `json:"disruptionBudget,omitempty"`

	// Autoscaling, when set, renders a HorizontalPodAutoscaler for the
	// route's Deployment, which then owns its replica count (replicas is
	// ignored).
	// +optional
	Autoscaling *RouteAutoscaling `json:"autoscaling,omitempty"`
}

// AnswerMode says who writes the answer.
// +kubebuilder:validation:Enum=generative;extractive
type AnswerMode string

// Answer modes.
const (
	// AnswerGenerative: the chat model writes the answer from the fragments.
	AnswerGenerative AnswerMode = "generative"
	// AnswerExtractive: the route quotes the fragments' sentences that best
	// answer the question, cited, without a model call for the answer.
	AnswerExtractive AnswerMode = "extractive"
)

// AnswerSettings say who writes the answer.
// +kubebuilder:validation:XValidation:rule="!has(self.grounding) || !has(self.grounding.scorer) || self.grounding.scorer != 'judge' || has(self.judge)",message="grounding.scorer judge needs judge: the model that judges each sentence",fieldPath=".judge",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.grounding) || !has(self.grounding.scorer) || self.grounding.scorer != 'judge' || !has(self.grounding.policy) || self.grounding.policy == 'annotate' || !has(self.judge) || (has(self.judge.calibratedBy) && size(self.judge.calibratedBy) > 0)",message="grounding.scorer judge with policy strip or fallback needs judge.calibratedBy: a judge whose precision nobody measured must not decide what users see (docs/route.md, The grounding judge)",fieldPath=".judge.calibratedBy",reason=FieldValueRequired
type AnswerSettings struct {
	// Mode is generative (default) or extractive. With extractive and no
	// model a turn makes no chat model call; with extractive and
	// model.searchPolicy always, none for a first question that finds
	// something (a follow-up is condensed, and a miss rephrased once while
	// retrieval.research is on).
	// +optional
	// +kubebuilder:default=generative
	Mode AnswerMode `json:"mode,omitempty"`

	// Grounding checks the model's answer, sentence by sentence, against
	// the packed fragments, and says what the client is shown.
	// +optional
	Grounding *GroundingSettings `json:"grounding,omitempty"`

	// Answerability decides, after the search and before the answer,
	// whether what was packed answers the question, and answers with the
	// platform's not-found wording when it does not, without an answer
	// call. See docs/route.md, "Honest not found".
	// +optional
	Answerability *AnswerabilitySettings `json:"answerability,omitempty"`

	// WhenModelRefuses is what the route does when the answerability check
	// (any rule set) let the question through and the model still answers
	// with the not-found wording: accept (default) lets it stand; quote
	// answers with cited quotes of the packed fragments instead (no model
	// call; the not-found wording is held until the reply shows it is
	// not one); askAgain asks the model once more, saying the fragments
	// hold the answer (one more answer call). See docs/route.md, "Honest
	// not found".
	// +optional
	WhenModelRefuses ModelRefusal `json:"whenModelRefuses,omitempty"`

	// Judge is a chat model the route asks to check, not to answer: the
	// answerability check's model rule asks it in place of spec.model,
	// and grounding.scorer judge asks it about each answer sentence. Any
	// OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, OpenAI): a
	// route that answers with a small model can check with a capable one.
	// Its calls share no prompt cache with the answer's (another server),
	// so each one reads its whole prompt. See docs/route.md, "The
	// grounding judge".
	// +optional
	Judge *JudgeModel `json:"judge,omitempty"`
}

// JudgeModel is an OpenAI-compatible chat completions endpoint the route's
// checks ask. It is asked greedily, and its replies are short (one token
// for answerability, a JSON verdict per sentence for grounding).
type JudgeModel struct {
	// BaseURL of the OpenAI-compatible API, e.g. http://vllm.models.svc/v1.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	BaseURL string `json:"baseURL"`

	// Name of the model as the endpoint knows it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// APIKeySecretRef selects the endpoint's API key, if it needs one; the
	// Secret must list the judge's host in its ragroute.io/allowed-hosts
	// annotation, as spec.model's must.
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`

	// CalibratedBy says what measured the judge's precision against a
	// person's labels (for example "eval-answers --support-only on
	// test/eval/support, 2026-12-09: precision 0.91"); required when
	// grounding.scorer is judge with policy strip or fallback, so that no
	// unmeasured judge decides what users see. Free text, for the reports.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	CalibratedBy string `json:"calibratedBy,omitempty"`
}

// AnswerabilityCheck is how the route decides, before the answer, whether
// the packed fragments answer the question.
// +kubebuilder:validation:Enum=off;coverage;model
type AnswerabilityCheck string

// Answerability checks.
const (
	// AnswerabilityOff: the answer is written from whatever was packed
	// (the prompt's not-found rule is all that stops the model).
	AnswerabilityOff AnswerabilityCheck = "off"
	// AnswerabilityCoverage: not found when no packed fragment holds
	// minCoverage of the question's content words (singular and plural
	// alike). Costs nothing (no call); catches on-topic
	// questions about something the documents never name; also applies
	// to extractive answers.
	AnswerabilityCoverage AnswerabilityCheck = "coverage"
	// AnswerabilityModel: the chat model (answer.judge instead, when set)
	// is asked, after the answer's own prompt, whether the fragments hold
	// the answer; its P(yes) is read from the first token's
	// log-probabilities (the server must return logprobs: llama.cpp, vLLM
	// and OpenAI do). Costs one one-token call whose prompt a server's
	// prompt cache shares with the answer's (not the judge's: another
	// server reads the whole prompt); only as good as the model's
	// judgement (weak with a 1.5B model, docs/eval.md); generative answers
	// only.
	AnswerabilityModel AnswerabilityCheck = "model"
)

// AnswerabilitySettings choose the check before the answer and its
// threshold.
type AnswerabilitySettings struct {
	// Check is off (default), coverage or model.
	// +optional
	// +kubebuilder:default=off
	Check AnswerabilityCheck `json:"check,omitempty"`

	// MinCoverage is coverage's threshold: the share of the question's
	// content words one packed fragment must hold. Higher turns away
	// more unanswerable questions and more answerable ones (default 0.5,
	// chosen by cross-validation on the dev questions; docs/eval.md).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinCoverage *float64 `json:"minCoverage,omitempty"`

	// MinProbability is model's threshold: the model's probability that
	// the fragments answer the question (default 0.5).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinProbability *float64 `json:"minProbability,omitempty"`

	// Names is require or ignore (default): with require, a question that
	// uses a name (a tool, a resource kind, an identifier: `Velero`,
	// `AnalysisTemplate`, `argocd-repo-server`; in a Russian question any
	// word in Latin letters) that no packed fragment holds in any form is
	// not found, whatever the check says. Nothing to fit: users reword
	// what they ask, not the name of what they ask about. Free (no call);
	// applies to extractive answers too.
	// +optional
	// +kubebuilder:validation:Enum=require;ignore
	Names string `json:"names,omitempty"`

	// MinRelevance, with a cross-encoder (rerank.mode crossEncoder), is
	// not found when the best packed fragment's relevance is below it;
	// 0 or unset reads none. Free: the search read it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinRelevance *float64 `json:"minRelevance,omitempty"`

	// CalibratedBy says what set the thresholds (for example the
	// RouteEvaluation whose status.answerability recommended them, and
	// when); each answerability event carries it, so a refusal can be
	// traced to its calibration.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	CalibratedBy string `json:"calibratedBy,omitempty"`
}

// Answerability names rules.
const (
	AnswerabilityNamesRequire = "require"
	AnswerabilityNamesIgnore  = "ignore"
)

// ModelRefusal is what the route does when the answerability check let a
// question through and the model still answers with the not-found
// wording.
// +kubebuilder:validation:Enum=accept;quote;askAgain
type ModelRefusal string

// Model refusal overrides.
const (
	// RefusalAccept: the model's not-found stands.
	RefusalAccept ModelRefusal = "accept"
	// RefusalQuote: the route answers with the extractive answer (cited
	// quotes of the packed fragments) in its place.
	RefusalQuote ModelRefusal = "quote"
	// RefusalAskAgain: the model is asked once more, told that the
	// fragments hold the answer; a second refusal stands.
	RefusalAskAgain ModelRefusal = "askAgain"
)

// GroundingPolicy is what the route does with answer sentences the packed
// fragments do not support.
// +kubebuilder:validation:Enum=annotate;strip;fallback
type GroundingPolicy string

// Grounding policies.
const (
	// GroundingAnnotate streams the answer as written and reports each
	// sentence's support in grounding events.
	GroundingAnnotate GroundingPolicy = "annotate"
	// GroundingStrip shows each sentence once checked, and only if
	// supported.
	GroundingStrip GroundingPolicy = "strip"
	// GroundingFallback holds the answer until it is checked and replaces
	// it with the extractive answer when its grounded ratio is below
	// fallbackBelow.
	GroundingFallback GroundingPolicy = "fallback"
)

// GroundingScorer is what judges each answer sentence's support.
// +kubebuilder:validation:Enum=similarity;judge
type GroundingScorer string

// Grounding scorers.
const (
	// GroundingSimilarity: the sentence's embedding similarity and word
	// overlap with the fragments' sentences, against supportThreshold.
	GroundingSimilarity GroundingScorer = "similarity"
	// GroundingJudge: the answer's sentences go to answer.judge, a batch
	// per call, with the question and the packed fragments; it names the
	// fragment that states each one, or none.
	GroundingJudge GroundingScorer = "judge"
)

// GroundingSettings tune the grounding check.
type GroundingSettings struct {
	// Policy is annotate (default), strip or fallback.
	// +optional
	// +kubebuilder:default=annotate
	Policy GroundingPolicy `json:"policy,omitempty"`

	// SupportThreshold is the support a sentence needs: the mean of its
	// best embedding similarity to a fragment sentence and the share of
	// its content words that sentence holds (default 0.55, calibrated
	// with all-MiniLM-L6-v2; see docs/eval.md). A sentence whose numbers,
	// flags, paths or URLs no fragment holds is unsupported whatever its
	// score.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	SupportThreshold *float64 `json:"supportThreshold,omitempty"`

	// FallbackBelow is the share of supported sentences under which the
	// fallback policy replaces the answer (default 0.5).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	FallbackBelow *float64 `json:"fallbackBelow,omitempty"`

	// Scorer is similarity (default: supportThreshold over embedding
	// similarity and word overlap, no call) or judge: answer.judge reads
	// the question, the packed fragments and the answer's sentences, a
	// batch per call, and says which fragment states each (a verdict it
	// cannot give in JSON fails the check). It sees what similarity
	// cannot, a sentence true of a fragment but offered for another
	// situation than the question asks, at one judge call per batch of
	// sentences. With policy strip or fallback it needs
	// judge.calibratedBy. See docs/route.md, "The grounding judge".
	// +optional
	Scorer GroundingScorer `json:"scorer,omitempty"`
}

// RouteUI switches the route's web page.
type RouteUI struct {
	// Enabled serves the page at GET /. It calls the same API with the
	// same identity, so it never widens what a user may see.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// RouteMCP switches the route's Model Context Protocol endpoint.
type RouteMCP struct {
	// Enabled serves /mcp (streamable HTTP transport, stateless, so any
	// replica serves any request) with two tools: search_knowledge (the
	// fragments, as POST /v1/search) and ask (a whole turn, as the
	// chat API). Each request carries the caller's identity as the HTTP
	// API's do (a JWT route also serves the OAuth protected-resource
	// metadata naming its issuer), the ACL filter applies, and each call
	// counts against the caller's turn limits. Turn it off for a route
	// that only a chat UI should use: agents then cannot reach it.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
}

// RouteCORS are the browser origins a route answers.
type RouteCORS struct {
	// AllowedOrigins are exact origins (scheme://host[:port]); "*" admits
	// any, which only suits routes whose identity a browser cannot forge
	// (JWT bearer tokens).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^(\*|https?://[^/\s]+)$`
	AllowedOrigins []string `json:"allowedOrigins"`
}

// RoutePodSettings are the metadata and scheduling of a route's pods.
type RoutePodSettings struct {
	// Annotations are added to the pods (the operator's own win).
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// Labels are added to the pods (the operator's selector labels win).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TopologySpreadConstraints without a labelSelector select the route's
	// own pods.
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// RouteDisruptionBudget is a PodDisruptionBudget's one bound.
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="set exactly one of minAvailable or maxUnavailable",reason=FieldValueInvalid
type RouteDisruptionBudget struct {
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// RouteAutoscaling scales a route on CPU or on its turns in flight.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas",fieldPath=".minReplicas",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.targetCPUUtilizationPercentage) || has(self.targetTurnsInFlightPerPod)",message="set targetCPUUtilizationPercentage, targetTurnsInFlightPerPod or both",reason=FieldValueRequired
type RouteAutoscaling struct {
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MinReplicas int32 `json:"minReplicas,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxReplicas int32 `json:"maxReplicas"`
	// TargetCPUUtilizationPercentage of the serving container's CPU request.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
	// TargetTurnsInFlightPerPod scales on the pods' ragroute_turns_in_flight
	// metric (average per pod); it needs a custom metrics adapter (e.g.
	// prometheus-adapter) that serves it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TargetTurnsInFlightPerPod *int32 `json:"targetTurnsInFlightPerPod,omitempty"`
}

// SearchPolicy says who decides whether a turn searches.
// +kubebuilder:validation:Enum=modelDecides;always
type SearchPolicy string

// Search policies.
const (
	SearchPolicyModelDecides SearchPolicy = "modelDecides"
	SearchPolicyAlways       SearchPolicy = "always"
)

// RouteMode is the turn's shape.
// +kubebuilder:validation:Enum=singleRound;agentic
type RouteMode string

// Route modes.
const (
	ModeSingleRound RouteMode = "singleRound"
	ModeAgentic     RouteMode = "agentic"
)

// AgenticSettings tune the research harness of mode agentic.
type AgenticSettings struct {
	// ToolProtocol is how the harness gets the model's tool calls: native
	// (the model's tool calls, or calls it writes in its text), json (one
	// JSON action per step under a JSON schema, response_format
	// json_schema: for models that make no tool calls, e.g. small local
	// ones) or auto (native, switching the turn to json after a reply that
	// calls no tool).
	// +optional
	// +kubebuilder:default=auto
	// +kubebuilder:validation:Enum=auto;native;json
	ToolProtocol string `json:"toolProtocol,omitempty"`
}

// ChatModel is an OpenAI-compatible chat completions endpoint.
type ChatModel struct {
	// BaseURL of the OpenAI-compatible API, e.g. http://vllm.models.svc/v1.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	BaseURL string `json:"baseURL"`

	// Name of the model as the endpoint knows it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// APIKeySecretRef selects the endpoint's API key, if it needs one.
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`

	// Temperature of sampling.
	// +optional
	// +kubebuilder:default=0.2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2
	Temperature *float64 `json:"temperature,omitempty"`

	// MaxTokens caps the answer; it must fit the window's answer reserve.
	// +optional
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=1048576
	MaxTokens int32 `json:"maxTokens,omitempty"`

	// SearchPolicy: modelDecides offers search_knowledge as a tool; always
	// searches on every turn, for small models without reliable tool calls.
	// +optional
	// +kubebuilder:default=modelDecides
	SearchPolicy SearchPolicy `json:"searchPolicy,omitempty"`

	// MaxToolCallsPerRound caps the tool calls run from one model reply;
	// calls past it are answered "not run", so a model that asks for
	// hundreds cannot start hundreds of searches.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	MaxToolCallsPerRound int32 `json:"maxToolCallsPerRound,omitempty"`

	// IdleTimeout ends a turn with the error code model_timeout when the
	// model's stream sends nothing for this long (before the first token
	// too), apart from the whole turn's time limit. Allow for a slow model
	// to read a full window before its first token.
	// +optional
	// +kubebuilder:default="60s"
	IdleTimeout *metav1.Duration `json:"idleTimeout,omitempty"`
}

// WebSearch is an HTTP search endpoint offered as the web_search tool.
type WebSearch struct {
	// BaseURL of the search endpoint.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	BaseURL string `json:"baseURL"`

	// APIKeySecretRef selects the endpoint's API key, if it needs one.
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`
}

// ContextWindow is the token budget of one model call.
type ContextWindow struct {
	// ContextTokens is the model's context window. Every model call of a
	// turn fits it with answerReserveTokens left for the reply, counted
	// with cl100k_base and 15% spare for the model's own tokenizer; the
	// conversation is trimmed oldest first (the last question always kept)
	// to at most half of what the system prompt leaves, so fragments keep
	// the rest.
	// +required
	// +kubebuilder:validation:Minimum=512
	// +kubebuilder:validation:Maximum=2097152
	ContextTokens int32 `json:"contextTokens"`

	// AnswerReserveTokens are kept free for the answer.
	// +required
	// +kubebuilder:validation:Minimum=64
	// +kubebuilder:validation:Maximum=1048576
	AnswerReserveTokens int32 `json:"answerReserveTokens"`
}

// RetrievalSettings filter the fused candidates before packing. Each floor
// is either raw (a cosine, the same for every embedder) or relative to the
// store's background similarity (…Sigmas), never both. Every setting here
// that is a cosine (similarityFloor, researchBelow, diversity.margin) is
// compared with the question-to-fragment cosine in every rerank mode; only
// strictFloor applies to a cross-encoder's relevance under rerank.mode
// crossEncoder (its own default there).
// +kubebuilder:validation:XValidation:rule="!has(self.similarityFloor) || !has(self.similarityFloorSigmas)",message="set similarityFloor or similarityFloorSigmas, not both",fieldPath=".similarityFloorSigmas",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.strictFloor) || !has(self.strictFloorSigmas)",message="set strictFloor or strictFloorSigmas, not both",fieldPath=".strictFloorSigmas",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.similarityFloorSigmas) || !has(self.strictFloorSigmas) || self.similarityFloorSigmas <= self.strictFloorSigmas",message="similarityFloorSigmas must not exceed strictFloorSigmas",fieldPath=".similarityFloorSigmas",reason=FieldValueInvalid
type RetrievalSettings struct {
	// SimilarityFloor drops candidates whose cosine similarity to the
	// question (by the store's embedder, text or title, whichever is
	// closer) is below it, before reranking. Default 0.2 (tuned for
	// all-MiniLM-L6-v2; other embedders score unrelated text far higher,
	// see similarityFloorSigmas).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	SimilarityFloor *float64 `json:"similarityFloor,omitempty"`

	// SimilarityFloorSigmas sets the similarity floor relative to the
	// embedder's background similarity on the store (status.background of
	// the KnowledgeStore, measured at ingestion): mean + sigmas × standard
	// deviation of how similar chunk titles score against chunks of other
	// documents. The same value means about the same for every embedder;
	// (floor − mean) / stdDev converts a raw floor that works. Until a
	// background is recorded the route uses the default raw floor.
	// +optional
	// +kubebuilder:validation:Minimum=-5
	// +kubebuilder:validation:Maximum=20
	SimilarityFloorSigmas *float64 `json:"similarityFloorSigmas,omitempty"`

	// StrictFloor drops candidates below it after reranking: the
	// cross-encoder's relevance (a probability) with rerank.mode
	// crossEncoder, else the same similarity. Nothing left means the
	// not-found wording, without an answer call (after the one re-search
	// when research is on, which costs a rephrase call: docs/route.md,
	// "What a not-found costs"). `make eval` prints what each
	// floor does on a question set. Default 0.35, or 0.01 with rerank.mode
	// crossEncoder (cross-validated on the dev set with the local
	// ms-marco cross-encoder; 0.35 turned away 8% of answerable questions).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	StrictFloor *float64 `json:"strictFloor,omitempty"`

	// StrictFloorSigmas sets the strict floor relative to the embedder's
	// background similarity, as similarityFloorSigmas does; not with
	// rerank.mode crossEncoder, whose relevance is not a cosine.
	// +optional
	// +kubebuilder:validation:Minimum=-5
	// +kubebuilder:validation:Maximum=20
	StrictFloorSigmas *float64 `json:"strictFloorSigmas,omitempty"`

	// MaxFragments is the hard maximum of fragments packed into a turn.
	// +optional
	// +kubebuilder:default=6
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	MaxFragments int32 `json:"maxFragments,omitempty"`

	// MinConfidence turns an on-topic question the knowledge does not
	// answer into the not-found wording, without an answer call (a search
	// below it packs nothing, so research, when on, rephrases once). The
	// search's confidence score is the best candidate's similarity in
	// sigmas over the embedder's background (status.background of the
	// KnowledgeStore), plus 8 times its lead over the next nine
	// candidates in the same sigmas, less 1 when dense and lexical search
	// share none of their best ten and less 0.5 when a name in the
	// question (`Velero`, `AnalysisTemplate`) is in no candidate; below
	// minConfidence, not found. Unset: off. `make eval` prints what each
	// value would do on a question set (about 5.25 on the Argo CD docs
	// with MiniLM). Needs a recorded background; until one exists it does
	// not apply.
	// +optional
	// +kubebuilder:validation:Minimum=-5
	// +kubebuilder:validation:Maximum=20
	MinConfidence *float64 `json:"minConfidence,omitempty"`

	// Research lets a turn that found nothing search once more before
	// the not-found wording: the chat model rephrases the question (one
	// short call, no tools) and the route searches that, once; a second
	// miss is not found. So a not-found costs that one model call (beside
	// the decision under searchPolicy modelDecides); false makes it cost
	// none with searchPolicy always. A route without a model, and a
	// rephrase that repeats a searched query, do not search again.
	// Single-round mode only. Default true.
	// +optional
	// +kubebuilder:default=true
	Research *bool `json:"research,omitempty"`

	// ResearchBelow also re-searches when the best packed fragment's
	// cosine similarity to the question is below it, though some passed
	// the floors. A cosine in every rerank mode, never a cross-encoder's
	// relevance (the retrieval event shows both: similarity and score).
	// Unset: only when nothing passed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	ResearchBelow *float64 `json:"researchBelow,omitempty"`

	// FlaggedFragments is what a turn does with a fragment that ingestion
	// flagged as reading like instructions to a model: keep (packed, the
	// flag stated inside its fence), drop (never packed), or quarantine
	// (packed only as quoted, datamarked text). Default keep.
	// +optional
	// +kubebuilder:default=keep
	FlaggedFragments FlaggedFragmentPolicy `json:"flaggedFragments,omitempty"`

	// Diversity bounds the fragments of one document in a turn: a
	// document's best fragment always enters; a further one only when its
	// cosine similarity is within margin of that best's, up to
	// maxPerDocument, or when the document dominates the candidates.
	// Default 3 within 0.05, dominance 0.4.
	// +optional
	Diversity *DiversitySettings `json:"diversity,omitempty"`
}

// FlaggedFragmentPolicy is what a turn does with a flagged fragment.
// +kubebuilder:validation:Enum=keep;drop;quarantine
type FlaggedFragmentPolicy string

// Flagged-fragment policies.
const (
	FlaggedKeep       FlaggedFragmentPolicy = "keep"
	FlaggedDrop       FlaggedFragmentPolicy = "drop"
	FlaggedQuarantine FlaggedFragmentPolicy = "quarantine"
)

// DiversitySettings bound the fragments of one document in a turn.
type DiversitySettings struct {
	// MaxPerDocument caps the fragments of one document; 1 is the v1 rule
	// (best fragment per document only).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	MaxPerDocument int32 `json:"maxPerDocument,omitempty"`

	// Margin is how far below its document's best fragment, in cosine
	// similarity to the question, a further fragment may be and still
	// enter; a cosine in every rerank mode, also when a cross-encoder
	// ordered the fragments. Cosines are the embedder's own units: an
	// embedder with a narrow band (e5) wants a smaller margin.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Margin *float64 `json:"margin,omitempty"`

	// Dominance is the share of the best ten candidates that makes a
	// document the question's subject: its sections then enter by rank,
	// past margin and maxPerDocument (0.4: four of the ten). 0 turns the
	// rule off. Default 0.4.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Dominance *float64 `json:"dominance,omitempty"`
}

// RerankMode orders candidates.
// +kubebuilder:validation:Enum=rrf;crossEncoder
type RerankMode string

// Rerank modes.
const (
	RerankRRF          RerankMode = "rrf"
	RerankCrossEncoder RerankMode = "crossEncoder"
)

// RerankSettings chooses the reranker.
// +kubebuilder:validation:XValidation:rule="self.mode != 'crossEncoder' || has(self.crossEncoder)",message="crossEncoder must be set when mode is crossEncoder",fieldPath=".crossEncoder",reason=FieldValueRequired
type RerankSettings struct {
	// Mode: rrf keeps the fused order; crossEncoder rescores the top N.
	// +optional
	// +kubebuilder:default=rrf
	Mode RerankMode `json:"mode,omitempty"`

	// CrossEncoder is the rerank endpoint used when mode is crossEncoder.
	// +optional
	CrossEncoder *CrossEncoder `json:"crossEncoder,omitempty"`
}

// CrossEncoder is a rerank endpoint scoring (query, fragment) pairs.
type CrossEncoder struct {
	// BaseURL of the rerank API.
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	BaseURL string `json:"baseURL"`

	// Model name as the endpoint knows it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model"`

	// TopN candidates are rescored; only they can be packed (the rest
	// have no relevance to pass the strict floor with).
	// +optional
	// +kubebuilder:default=12
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=200
	TopN int32 `json:"topN,omitempty"`

	// FirstStageWeight weighs the store's own (fused) order beside the
	// cross-encoder's: the top N are ordered by reciprocal-rank fusion of
	// both, so a reranker trained on other text does not overturn what
	// hybrid search is sure of. 0 orders by relevance alone. Default 1
	// (2-fold cross-validated by `make eval`, docs/eval.md).
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	FirstStageWeight *float64 `json:"firstStageWeight,omitempty"`

	// MaxDocumentTokens is how many tokens of each fragment's text the
	// cross-encoder reads, after the fragment's title path; 0 reads the
	// whole fragment. A cross-encoder's time grows with what it reads
	// (on 2 CPU cores it is most of the wait before the model starts).
	// Measured on the Argo CD dev set at topN 20 (docs/eval.md): 96
	// tokens take 0.60× the time and lose 0.022 nDCG@10, 64 tokens 0.46×
	// and 0.050; so the default reads the whole fragment.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	MaxDocumentTokens *int32 `json:"maxDocumentTokens,omitempty"`

	// APIKeySecretRef selects the endpoint's API key, if it needs one.
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`
}

// StateBackend is where per-route state lives.
// +kubebuilder:validation:Enum=memory;redis
type StateBackend string

// State backends.
const (
	BackendMemory StateBackend = "memory"
	BackendRedis  StateBackend = "redis"
)

// CacheSettings configure the exact cache.
type CacheSettings struct {
	// Backend memory (per replica) or redis (shared).
	// +optional
	// +kubebuilder:default=memory
	Backend StateBackend `json:"backend,omitempty"`

	// TTL of an entry, at most 1h. A hit is served only after the store
	// shows that each of its fragments is still there, unchanged and
	// readable by the caller, so a deleted document or a narrowed ACL is
	// never served from the cache; the TTL bounds how long a document
	// added since is missing from a cached answer.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('1h')",message="cache.ttl must be more than 0s and at most 1h"
	TTL *metav1.Duration `json:"ttl,omitempty"`

	// MaxEntries bounds the cache; 0 disables it.
	// +optional
	// +kubebuilder:default=10000
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000000
	MaxEntries *int32 `json:"maxEntries,omitempty"`
}

// TurnSettings configure the turn event log.
type TurnSettings struct {
	// Backend memory (one replica) or redis (any replica serves any turn).
	// +optional
	// +kubebuilder:default=memory
	Backend StateBackend `json:"backend,omitempty"`

	// Retention keeps a finished turn's events for reconnects.
	// +optional
	// +kubebuilder:default="10m"
	Retention *metav1.Duration `json:"retention,omitempty"`

	// MaxMemoryMiB bounds the memory backend's events of all turns on one
	// replica together, in MiB (about: each event counts as its JSON).
	// Finished turns give way oldest first, before their retention;
	// while running turns hold it all, a new turn is refused with 503
	// overloaded. One turn may hold a sixteenth of it: past that, or when
	// running turns leave no room, the turn ends with the error code
	// too_long. The default, 64, is an eighth of the route pod's default
	// memory limit (512Mi); raise the limit with it
	// (spec.resources). Ignored by the redis backend.
	// +optional
	// +kubebuilder:default=64
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	MaxMemoryMiB int32 `json:"maxMemoryMiB,omitempty"`
}

// RouteLimits bound the turns of a route, per replica: /v1/turns,
// /v1/chat/completions and /v1/search each count as a turn. A user is the
// authenticated identity (principal user:<name>).
type RouteLimits struct {
	// ConcurrentTurnsPerUser caps one user's turns running at once; more
	// is refused with 429 rate_limited and a Retry-After.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	ConcurrentTurnsPerUser int32 `json:"concurrentTurnsPerUser,omitempty"`

	// TurnsPerMinutePerUser is one user's sustained rate of turns (a token
	// bucket holding concurrentTurnsPerUser turns, or a minute's worth if
	// fewer); more is refused with 429 rate_limited and a Retry-After
	// saying when the next turn is allowed.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	TurnsPerMinutePerUser int32 `json:"turnsPerMinutePerUser,omitempty"`

	// MaxInFlightTurns caps the turns running at once on one replica, all
	// users together; more is refused with 503 overloaded and a
	// Retry-After.
	// +optional
	// +kubebuilder:default=256
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxInFlightTurns int32 `json:"maxInFlightTurns,omitempty"`

	// MaxSearchesInFlight caps the knowledge-store calls (hybrid
	// searches, split sections' parts, the cache's checks) running at
	// once on one replica; more wait for a slot, and the wait does not
	// count against timeouts.search, so a burst queues instead of failing
	// knowledge_unavailable. The wait shows as the store_queue stage of
	// ragroute_stage_duration_seconds.
	// +optional
	// +kubebuilder:default=8
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MaxSearchesInFlight int32 `json:"maxSearchesInFlight,omitempty"`
}

// RouteTimeouts are the deadlines of a knowledge search's I/O steps. A
// step past its deadline fails the search: the turn ends with the error
// code knowledge_unavailable, and /v1/search answers 502.
type RouteTimeouts struct {
	// Embed bounds embedding the query, its wait behind the replica's
	// grounding checks included; a turn the exact cache serves waits as
	// long at most for its turn.
	// +optional
	// +kubebuilder:default="10s"
	Embed *metav1.Duration `json:"embed,omitempty"`

	// Search bounds the Milvus hybrid search, and apart from it the
	// lookup of a split section's parts.
	// +optional
	// +kubebuilder:default="5s"
	Search *metav1.Duration `json:"search,omitempty"`

	// Rerank bounds the cross-encoder call (rerank.mode crossEncoder).
	// +optional
	// +kubebuilder:default="10s"
	Rerank *metav1.Duration `json:"rerank,omitempty"`
}

// RedisConnection says how to reach Redis.
// +kubebuilder:validation:XValidation:rule="!has(self.username) || has(self.passwordSecretRef)",message="username needs passwordSecretRef: an ACL user logs in with its password",fieldPath=".username",reason=FieldValueRequired
type RedisConnection struct {
	// Address host:port.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Address string `json:"address"`

	// DB number.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	DB int32 `json:"db,omitempty"`

	// Username is the Redis 6 ACL user the route logs in as, with
	// passwordSecretRef; empty: the default user.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[!-~]+$`
	Username string `json:"username,omitempty"`

	// PasswordSecretRef selects the Redis password (of username, or of the
	// default user).
	// +optional
	PasswordSecretRef *SecretKeyRef `json:"passwordSecretRef,omitempty"`

	// TLS connects over TLS 1.2 or later, verifying Redis' certificate.
	// +optional
	TLS *RedisTLS `json:"tls,omitempty"`

	// SealKeySecretRef selects the route's key (at least 32 bytes, e.g.
	// `openssl rand -base64 32`) that encrypts and authenticates every
	// value the route keeps in Redis: a value it did not write is never
	// used. Changing it empties the cache and loses the turns in flight.
	// +required
	SealKeySecretRef SecretKeyRef `json:"sealKeySecretRef"`
}

// RedisTLS says how to verify Redis' certificate.
type RedisTLS struct {
	// CASecretRef selects the PEM bundle of the CAs that sign Redis'
	// certificate (cert-manager's ca.crt); none: the system's roots.
	// +optional
	CASecretRef *SecretKeyRef `json:"caSecretRef,omitempty"`

	// ServerName the certificate must name; empty: the address's host.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName string `json:"serverName,omitempty"`
}

// RouteAuth establishes a request's identity: exactly one of jwt or
// trustedProxy.
// +kubebuilder:validation:XValidation:rule="has(self.jwt) != has(self.trustedProxy)",message="exactly one of jwt or trustedProxy must be set",reason=FieldValueInvalid
type RouteAuth struct {
	// JWT verifies bearer tokens.
	// +optional
	JWT *JWTAuth `json:"jwt,omitempty"`

	// TrustedProxy reads identity headers set by a proxy in front of the route.
	// +optional
	TrustedProxy *TrustedProxyAuth `json:"trustedProxy,omitempty"`
}

// JWTAuth verifies bearer JWTs and maps their claims to principals.
type JWTAuth struct {
	// Issuer the token's iss must equal; https://, or http:// only on
	// loopback (localhost, 127.0.0.1, [::1]).
	// +required
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('http://') || self.matches('^http://(localhost|127[.]0[.]0[.]1|[[]::1[]])(:[0-9]+)?([/?#].*)?$')",message="issuer must be https:// unless its host is localhost, 127.0.0.1 or [::1]: tokens and keys fetched over http:// can be forged on the way",reason=FieldValueForbidden
	Issuer string `json:"issuer"`

	// Audience the token's aud must contain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Audience string `json:"audience"`

	// JWKSURL serves the signing keys. When unset, the route finds them by
	// OpenID discovery: the jwks_uri of <issuer>/.well-known/openid-configuration.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('http://') || self.matches('^http://(localhost|127[.]0[.]0[.]1|[[]::1[]])(:[0-9]+)?([/?#].*)?$')",message="jwksURL must be https:// unless its host is localhost, 127.0.0.1 or [::1]: tokens and keys fetched over http:// can be forged on the way",reason=FieldValueForbidden
	JWKSURL string `json:"jwksURL,omitempty"`

	// UserClaim names the user (principal user:<value>).
	// +optional
	// +kubebuilder:default=sub
	// +kubebuilder:validation:MaxLength=128
	UserClaim string `json:"userClaim,omitempty"`

	// GroupsClaim lists the groups (principals group:<value>).
	// +optional
	// +kubebuilder:default=groups
	// +kubebuilder:validation:MaxLength=128
	GroupsClaim string `json:"groupsClaim,omitempty"`
}

// TrustedProxyAuth reads the identity from headers set by a trusted proxy.
// Anything that reaches the route's port could set those headers, so the
// proxy must prove itself: with secretRef it sends a shared secret in
// secretHeader on every request; without one the route trusts any caller,
// which must be asked for with insecureAllowAnyCaller.
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) || (has(self.insecureAllowAnyCaller) && self.insecureAllowAnyCaller)",message="trustedProxy needs secretRef (a shared secret the proxy sends on every request) or insecureAllowAnyCaller: true",fieldPath=".secretRef",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || !has(self.insecureAllowAnyCaller) || !self.insecureAllowAnyCaller",message="insecureAllowAnyCaller cannot be combined with secretRef",fieldPath=".insecureAllowAnyCaller",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.insecureAllowAnyCaller) || !self.insecureAllowAnyCaller || (has(self.from) && size(self.from) > 0)",message="insecureAllowAnyCaller needs from: the peers (the proxy) the route's NetworkPolicy admits, so no other pod can claim an identity",fieldPath=".from",reason=FieldValueRequired
type TrustedProxyAuth struct {
	// UserHeader carries the user name.
	// +optional
	// +kubebuilder:default=X-Forwarded-User
	// +kubebuilder:validation:MaxLength=128
	UserHeader string `json:"userHeader,omitempty"`

	// GroupsHeader carries comma-separated groups.
	// +optional
	// +kubebuilder:default=X-Forwarded-Groups
	// +kubebuilder:validation:MaxLength=128
	GroupsHeader string `json:"groupsHeader,omitempty"`

	// SecretRef holds the shared secret the proxy sends in SecretHeader;
	// a request without it (or with another value, or with the header
	// twice) is refused with 401 before the identity headers are read.
	// Rotating the Secret rolls the route's pods.
	// +optional
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`

	// SecretHeader carries the shared secret; the proxy must strip it from
	// client requests like the identity headers.
	// +optional
	// +kubebuilder:default=X-Ragroute-Proxy-Secret
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9-]+$`
	SecretHeader string `json:"secretHeader,omitempty"`

	// From are the pods allowed to reach the route (the proxy). When set,
	// the operator renders a NetworkPolicy that admits only these peers to
	// the route's API port, and MonitoringFrom to its metrics port; your
	// network plugin must enforce NetworkPolicies for it to take effect.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	From []NetworkPeer `json:"from,omitempty"`

	// MonitoringFrom are peers that NetworkPolicy admits to the route's
	// metrics port only (8081: /metrics and the probes), e.g. Prometheus;
	// they never reach the API's port.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	MonitoringFrom []NetworkPeer `json:"monitoringFrom,omitempty"`

	// InsecureAllowAnyCaller trusts the identity headers from any caller
	// that reaches the route's port, with no shared secret. It needs from
	// (the NetworkPolicy then admits only those peers) and an operator run
	// with --allow-insecure-proxy-auth; otherwise the route is not deployed
	// (Ready=False, reason InsecureProxyAuthNotAllowed). The QueryRoute
	// shows InsecureAuth=True and a Warning event while it is set.
	// +optional
	InsecureAllowAnyCaller bool `json:"insecureAllowAnyCaller,omitempty"`
}

// NetworkPeer selects pods by namespace and pod labels, like a
// NetworkPolicy peer: both selectors must match; an omitted namespace
// selector means the route's own namespace.
// +kubebuilder:validation:XValidation:rule="has(self.namespaceSelector) || has(self.podSelector)",message="a peer needs namespaceSelector, podSelector or both",reason=FieldValueRequired
type NetworkPeer struct {
	// NamespaceSelector selects the namespaces of allowed pods ({} for all).
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// PodSelector selects allowed pods ({} for all in those namespaces).
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
}

// QueryRouteStatus is what the operator observed of a QueryRoute.
type QueryRouteStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Progressing, Degraded, InsecureAuth,
	// GroundingUnits, Reconciling, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Endpoint is the in-cluster URL of the route's query API.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Endpoint string `json:"endpoint,omitempty"`

	// ConfigHash identifies the effective configuration the pods run.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ConfigHash string `json:"configHash,omitempty"`

	// Replicas the Deployment has.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas the Deployment reports.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Selector is the label selector of the route's pods, for the scale
	// subresource (kubectl scale, a HorizontalPodAutoscaler).
	// +optional
	Selector string `json:"selector,omitempty"`
}

// QueryRoute is a served RAG route: a Deployment and Service answering
// questions from a KnowledgeStore under a PlatformPrompt.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (at most 63 characters, lower case, starting with a letter): it names the route's Service"
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=qr,categories=ragroute
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`,description="Ready replicas"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.spec.model.name`
// +kubebuilder:printcolumn:name="Store",type=string,JSONPath=`.spec.knowledgeStoreRef.name`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`,priority=1
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type QueryRoute struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec QueryRouteSpec `json:"spec"`
	// +optional
	Status QueryRouteStatus `json:"status,omitempty"`
}

// QueryRouteList is a list of QueryRoutes.
// +kubebuilder:object:root=true
type QueryRouteList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QueryRoute `json:"items"`
}

func init() {
	SchemeBuilder.Register(&QueryRoute{}, &QueryRouteList{})
}
