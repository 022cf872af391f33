// Package live scores a deployed route: it is what `ragroute eval-route`
// runs in every RouteEvaluation Job. Run asks the questions over HTTP as
// an identity the route trusts — its POST /v1/search, its turns (POST
// /v1/turns, their event stream read through route/turnstream), or both
// (Scope*) — with bounded concurrency, per-request timeouts and 429
// retries (client.go), and scores what the route answered with eval's
// scorers. What it reports is the Summary an operator reads back (Below
// names the figures under the RouteEvaluation's thresholds), the
// per-question Results, misses first, cut to fit a ConfigMap
// (EncodeResults), and the Job's termination message (EncodeTermination).
//
// It is product code: it never imports the lab (eval/lab; test/architecture
// checks), and nothing from Kubernetes.
package live
