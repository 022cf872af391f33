// Package turn plays one turn of a route, the turn behind `ragroute
// serve`, and emits its events: typed payloads (events.go) with one
// decoder (decode.go) and one fold of what they add up to (outcome.go),
// which the HTTP API streams, the turn log stores and every reader shares. It is named for the turn, not the route: "route"
// also names the QueryRoute resource and the route pod's tree
// (internal/route), and this package is one turn of it.
//
// Three parts. The Engine is a route's configuration, grouped by what each
// group steers (settings.go): the search, the window, the answer, the
// agentic harness; it holds nothing of a turn, so one serves every turn of
// its route. Engine.Run makes a turn (turn.go): the engine, the input, the
// prompt in the question's language, the emitter and the bookkeeping
// turn.completed reports. The turn's methods are the steps, each with one
// way in: callModel (modelcall.go) and search (tools.go), one span, timing
// and usage bookkeeping each; pack (evidence.go); respond (respond.go). A
// mode plays the turn with those steps:
//
//   - singleRound (single_round.go): decide → retrieve → respond. The
//     chat model is offered search_knowledge (and web_search) for ONE
//     round of tools (decide.go, tools.go), or with the always policy the
//     condensed question is searched (query.go); a round that finds too
//     little is rephrased and searched once more (research.go).
//   - agentic (agentic*.go, harness*.go): a researcher plays rounds in
//     which the model searches, saves and finalizes under rules the
//     harness enforces in code; what it finalizes is packed and answered
//     as a single round's is.
//
// Every model call fits the route's context window (window.go): counted
// with a margin for the model's own tokenizer, the conversation trimmed
// oldest first, at the turn's start, into its share. What the searches
// found, at most retrieval.maxFragments, each search's best first, is
// packed into what is left, fenced as untrusted data under a random
// per-turn marker, flagged fragments kept, dropped or quarantined
// (augment.go, untrusted.go). The answer streams through route/answer's
// stages (fence scrub → link guard → grounding gate) and the turn reports
// its citations (respond.go, citations.go), or quotes the
// fragments instead (extract.go). A failure is classified once into a
// code with a fixed client message (errors.go).
//
// Dependencies go one way: server → turn → answer → retrieval →
// knowledge/model. Nothing here imports Kubernetes.
package turn
