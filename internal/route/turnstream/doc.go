// Package turnstream is the client side of a turn's event stream: it reads
// the Server-Sent Events that route/server writes for GET
// /v1/turns/{id}/events, each payload decoded by the turn's own decoder
// (turn.Decode) into the type the turn emitted. The demo, the live scorer
// (eval/live) and the end-to-end tests read a turn through it.
package turnstream
