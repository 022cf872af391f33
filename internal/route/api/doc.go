// Package api is a route's HTTP API: Server submits turns (POST
// /v1/turns) and streams their events as Server-Sent Events with
// Last-Event-ID resume, serves the ACL-filtered /v1/search, the
// OpenAI-compatible /v1/chat/completions facade, the probes and the
// Prometheus metrics; Limits bound what one request may ask, and the
// turns one user (429) and the replica (503) may run at once or per
// minute.
package api
