package turn

import (
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// The Engine's settings, grouped by the part of a turn they steer.

// SearchSettings are how a turn searches: the tools the model is offered,
// how many of its calls run, the one re-search, and what is done with the
// fragments ingestion flagged.
type SearchSettings struct {
	// Policy is whether the model decides to search, or the question is
	// always searched.
	Policy podconfig.SearchPolicy
	// WebSearch, when set, is offered as web_search next to search_knowledge.
	WebSearch *retrieval.WebSearch
	// MaxToolCallsPerRound caps the tool calls run from the model's one
	// round (0: DefaultMaxToolCallsPerRound). The first ones run, at most
	// ToolCallParallelism at once; each call past the cap is answered
	// "not run" so the model can still answer. A reply of hundreds of
	// calls would otherwise be hundreds of concurrent searches.
	MaxToolCallsPerRound int
	// Research allows one rephrased search before a single-round turn
	// answers not found (research.go); ResearchBelow, when set, also
	// re-searches when the best fragment found scores below it.
	Research      bool
	ResearchBelow *float64
	// FlaggedFragments is what packing does with fragments ingestion
	// flagged as reading like instructions to a model: keep (also when
	// empty), drop or quarantine (untrusted.go).
	FlaggedFragments podconfig.FlaggedPolicy
}

// Window is the model's context window every call of a turn fits
// (window.go).
type Window struct {
	// ContextTokens is the whole window; AnswerReserve the part of it
	// kept for the reply.
	ContextTokens, AnswerReserve int
	// Tokens counts text as the window is budgeted (cl100k_base).
	Tokens tokenize.Counter
}

// AnswerSettings are how a turn answers from what it packed.
type AnswerSettings struct {
	// Mode is generative (the chat model writes the answer, also when
	// empty) or extractive (the route quotes the fragments: route/answer's
	// Quoter).
	Mode podconfig.AnswerMode
	// MaxTokens is the route's model.maxTokens: it caps the answer, the
	// extractive one too (0: the answer reserve alone).
	MaxTokens int
	// Grounding is what the grounding check does with the model's answer
	// (route/answer's Gate); its zero value annotates with the default
	// threshold.
	Grounding answer.GroundingSettings
	// Check is the grounding check's embedders (a cache of the fragments'
	// units, a client of their own that never holds up a query's
	// embedding) and how long annotate waits for it; the zero value checks
	// with the Engine's Searcher.Embedder, uncached (Engine.checker).
	Check answer.Checker
	// Answerability, when set, decides before the answer whether what was
	// packed answers the question (answerable.go): by the question's
	// coverage, or by asking the model (generative answers only); nil:
	// the answer is written from whatever was packed.
	Answerability *Answerability
	// WhenModelRefuses is what is done when the answerability check let
	// the question through and the model answers with the not-found
	// wording (refusal.go): accept (also when empty), quote or askAgain.
	WhenModelRefuses podconfig.ModelRefusal
	// Judge, when set, is the model the checks ask in place of Chat
	// (judge.go): the answerability check's model rule, and the grounding
	// check when Grounding.Scorer is judge (which, without one, fails the
	// check). Its failures are the judge's (DependencyJudge), not the
	// chat model's.
	Judge ChatModel
}

// AgenticSettings are the agentic mode's (agentic.go).
type AgenticSettings struct {
	// ToolProtocol is how an agentic turn gets the model's tool calls
	// (agentic_protocol.go); empty is auto.
	ToolProtocol podconfig.ToolProtocol
}
