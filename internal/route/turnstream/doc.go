// Package turnstream is the client side of a turn's event stream: it reads
// the Server-Sent Events that route/api writes for GET
// /v1/turns/{id}/events and decodes each payload into the type the Runner
// emitted (route's payloads, answer.Grounding). The demo, the live scorer
// (eval/live) and the end-to-end tests read a turn through it, so the wire
// format is parsed in one place.
package turnstream
