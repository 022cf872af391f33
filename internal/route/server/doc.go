// Package api is a route's HTTP API. New builds a Server from Options
// once (its metrics, its admission, its routes, the chat model's health
// watch); Handler serves it. The Server submits turns (POST /v1/turns)
// and streams their events as Server-Sent Events with Last-Event-ID
// resume, serves the ACL-filtered /v1/search, the OpenAI-compatible
// /v1/chat/completions facade, the probes and the Prometheus metrics;
// Limits bound what one request may ask, and the turns one user (429) and
// the replica (503) may run at once or per minute.
//
// An endpoint returns its refusal or failure as an error; one adapter
// (errors.go) answers it in OpenAI's error shape on every endpoint, and
// never with an upstream's error text, which goes to the log.
package server
