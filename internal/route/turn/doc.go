// Package route is the turn behind `ragroute serve`: a Runner plays one
// turn and emits its events (events.go), which the HTTP API streams and
// the turn log stores.
//
// Every model call of a turn fits the route's context window (window.go):
// counted with a margin for the model's own tokenizer, the conversation
// trimmed oldest first, at the turn's start, into its share.
//
// Single-round (turn.go): decide → retrieve → respond. The chat model is
// offered search_knowledge (and web_search) for ONE round of tools
// (decide.go, tools.go), or with the always policy the search runs on the
// condensed question; a round that finds too little is rephrased and
// searched once more (research.go); the queries the model writes are
// query.go's. What the searches found, at most retrieval.maxFragments
// across them, each search's best first, is packed into what is
// left of the context window, fenced as untrusted data under a random
// per-turn marker, flagged fragments kept, dropped or quarantined
// (augment.go, untrusted.go). The same model then answers with tools
// withheld (generate.go); its stream passes through route/answer's stages
// (fence scrub → link guard → grounding gate) and the turn reports the
// citations (citations.go), or replaces a poorly grounded answer with
// quotes (settle.go, extract.go). Agentic (agentic*.go, harness.go): the
// model researches in rounds with search, save and finalize under rules
// the harness enforces in code; what it finalizes goes through the same
// packing and answer.
//
// Every step calls the model through one callModel (modelcall.go) and
// searches through one search (tools.go): one span, timing and usage
// bookkeeping each. A failure is classified once into a code with a fixed
// client message (errors.go).
//
// The search body lives in route/retrieval; judging and filtering what the
// model writes back, and the extractive quotes, in route/answer; the HTTP
// API in route/api; who asks in route/identity; the events of running
// turns in route/turnlog; a client's reader of their stream in
// route/turnstream. Dependencies go one way: api → route → answer →
// retrieval → knowledge/model. Nothing here imports Kubernetes.
package turn
