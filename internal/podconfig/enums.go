package podconfig

import (
	"fmt"
	"strings"
)

// The enums below carry the values of their API fields unchanged, so a
// rendered config reads like the spec it came from.

// SearchPolicy says who decides to search.
type SearchPolicy string

const (
	// SearchModelDecides offers search_knowledge as a tool.
	SearchModelDecides SearchPolicy = "modelDecides"
	// SearchAlways searches before the model is called.
	SearchAlways SearchPolicy = "always"
)

// RerankMode chooses how candidates are reordered.
type RerankMode string

const (
	// RerankRRF keeps the fused RRF order.
	RerankRRF RerankMode = "rrf"
	// RerankCrossEncoder reorders the top candidates with a rerank endpoint.
	RerankCrossEncoder RerankMode = "crossEncoder"
)

// Backend is where the exact cache or the turn log lives.
type Backend string

const (
	// BackendMemory keeps state in the pod: one replica only.
	BackendMemory Backend = "memory"
	// BackendRedis shares state across replicas.
	BackendRedis Backend = "redis"
)

// Mode is how a turn runs.
type Mode string

const (
	// ModeSingleRound gives the model one round of tools.
	ModeSingleRound Mode = "singleRound"
	// ModeAgentic is the multi-round retriever harness.
	ModeAgentic Mode = "agentic"
)

// AnswerabilityCheck is who decides, before the answer, whether the
// packed fragments answer the question.
type AnswerabilityCheck string

const (
	// AnswerabilityOff leaves it to the model's prompt.
	AnswerabilityOff AnswerabilityCheck = "off"
	// AnswerabilityCoverage reads the share of the question's content
	// words the best-covering packed fragment holds.
	AnswerabilityCoverage AnswerabilityCheck = "coverage"
	// AnswerabilityModel asks the chat model, reading its odds of yes.
	AnswerabilityModel AnswerabilityCheck = "model"
)

// ModelRefusal is what a route does when its answerability check let the
// question through and the model answers with the not-found wording.
type ModelRefusal string

const (
	// RefusalAccept lets the model's not-found stand.
	RefusalAccept ModelRefusal = "accept"
	// RefusalQuote answers with the extractive answer instead.
	RefusalQuote ModelRefusal = "quote"
	// RefusalAskAgain asks the model once more.
	RefusalAskAgain ModelRefusal = "askAgain"
)

// AnswerMode says who writes the answer.
type AnswerMode string

const (
	// AnswerGenerative is the chat model writing the answer.
	AnswerGenerative AnswerMode = "generative"
	// AnswerExtractive is the route quoting the fragments; no model writes.
	AnswerExtractive AnswerMode = "extractive"
)

// GroundingPolicy says what the grounding check does with the model's
// answer.
type GroundingPolicy string

const (
	// GroundingAnnotate streams the answer as written and reports each
	// sentence's support.
	GroundingAnnotate GroundingPolicy = "annotate"
	// GroundingStrip shows only supported sentences, each once checked.
	GroundingStrip GroundingPolicy = "strip"
	// GroundingFallback holds the answer until it is checked and replaces
	// it with the extractive answer when too little of it is supported.
	GroundingFallback GroundingPolicy = "fallback"
)

// GroundingScorer says what judges each answer sentence's support.
type GroundingScorer string

const (
	// GroundingSimilarity scores each sentence by its embedding similarity
	// and word overlap with the fragments' sentences (the default, also
	// when empty).
	GroundingSimilarity GroundingScorer = "similarity"
	// GroundingJudge asks the route's judge model (answer.judge) which
	// fragment, if any, states each sentence.
	GroundingJudge GroundingScorer = "judge"
)

// FlaggedPolicy is what packing does with fragments ingestion flagged as
// reading like instructions to a model. Every fragment is fenced as data
// whatever the policy; a flagged one is in addition announced (keep),
// never shown (drop), or shown only as quoted text whose instructions no
// longer read as such (quarantine).
type FlaggedPolicy string

// The flagged-fragment policies.
const (
	FlaggedKeep       FlaggedPolicy = "keep"
	FlaggedDrop       FlaggedPolicy = "drop"
	FlaggedQuarantine FlaggedPolicy = "quarantine"
)

// oneOf is an error naming field and the values it takes when v is none
// of them; nil when it is one. Empty is one of them when it is listed
// (the field then takes its default).
func oneOf[T ~string](field string, v T, values ...T) error {
	var want []string
	for _, ok := range values {
		if v == ok {
			return nil
		}
		if ok != "" {
			want = append(want, string(ok))
		}
	}
	list := want[len(want)-1]
	if len(want) > 1 {
		list = strings.Join(want[:len(want)-1], ", ") + " or " + list
	}
	return fmt.Errorf("%s %q: want %s", field, v, list)
}

// Tokenizer names the store embedder's tokenizer: chunk sizes and the
// embedder's input limit are counted in its tokens.
type Tokenizer string

// The tokenizers ragroute counts with.
const (
	// TokenizerBERTUncased is BERT's uncased WordPiece (all-MiniLM,
	// bge-small, gte), the default; counts carry a margin for the
	// embedder's own.
	TokenizerBERTUncased Tokenizer = "bertUncased"
	// TokenizerXLMRoberta is XLM-RoBERTa's SentencePiece unigram
	// (multilingual-e5, bge-m3), counted exactly.
	TokenizerXLMRoberta Tokenizer = "xlmRoberta"
)

// CheckTokenizer is an error naming the field's values when t is none of
// them (empty: the default).
func CheckTokenizer(t Tokenizer) error {
	return oneOf("embedding.tokenizer", t, "", TokenizerBERTUncased, TokenizerXLMRoberta)
}

// ToolProtocol is how the agentic harness gets the model's tool calls.
type ToolProtocol string

const (
	// ToolProtocolAuto asks for native tool calls and switches the turn to
	// JSON actions after a reply that calls no tool.
	ToolProtocolAuto ToolProtocol = "auto"
	// ToolProtocolNative offers the tools as tools (the model's own tool
	// calls, or calls it writes in its text).
	ToolProtocolNative ToolProtocol = "native"
	// ToolProtocolJSON asks for one JSON action per step under a JSON
	// schema (response_format), for models that write no tool calls.
	ToolProtocolJSON ToolProtocol = "json"
)
