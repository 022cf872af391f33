// Package route is the turn behind `ragroute serve`: a Runner plays one
// turn as decide → retrieve → answer. The chat model is offered
// search_knowledge (and web_search) for ONE round of tools, or with the
// always policy the search runs on the condensed question; the fragments
// found are packed into what is left of the context window, fenced as
// untrusted data under a random per-turn marker (augment.go); the same
// model answers with tools withheld, its echoed fence markers scrubbed
// from the stream (scrub.go), and the markers it used are reported as
// citations. The turn's events and their payloads (events.go) are what
// the HTTP API streams and the turn log stores.
//
// The tool bodies live in route/retrieval; the HTTP API in route/api; who
// asks in route/identity; the events of running turns in route/turnlog.
// Dependencies go one way: api → route → retrieval → knowledge/model.
// Nothing here imports Kubernetes.
package route
