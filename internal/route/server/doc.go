// Package server is a route's HTTP server. New builds a Server from
// Options once (its metrics, its admission, its routes, the chat model's
// health watch); Handler serves it: POST /v1/turns and the turn's
// Server-Sent Events with Last-Event-ID resume, the ACL-filtered
// /v1/search, the OpenAI-compatible /v1/chat/completions, feedback on
// answers, the MCP tools at /mcp, the probes and the Prometheus metrics.
// Limits bound what one request may ask, and the turns one user (429) and
// the replica (503) may run at once or per minute.
//
// Every surface that plays a turn hands it to one driver (drive.go),
// which bounds, observes, folds and releases it; the surfaces only say
// what becomes of its events. An endpoint returns its refusal or failure
// as an error, which errors.go alone classifies and writes, in the
// surface's shape, never with an upstream's error text: that goes to the
// log.
package server
