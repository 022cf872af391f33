// Package assembly builds a route from its config: the one place a
// turn.Engine and its retrieval.Searcher are made from a
// podconfig.RouteConfig, so what the evaluations score is what the
// operator ships.
//
// NewSearcher and NewRunner wire the turn from the config over Parts, the
// backends a caller already made (the evaluations' collections, a test's
// scripted model); a part left nil is built from the config. Open is what
// `ragroute serve` runs: it connects to Milvus and Redis, builds the parts
// a pod needs (the generation watch, Redis' cache, vector cache and turn
// log, the authenticator) and the query API's options around the same
// Runner. The clients of ragroute's pods (Milvus, the embedders, the chat
// model, Redis) are made here for serve, ingest and the evaluations alike.
//
// Secrets come in through Secrets (cmd passes the environment); nothing
// here reads the environment, and nothing here imports Kubernetes.
// test/architecture keeps this the only package outside tests that
// constructs a Runner or a Searcher.
package assembly
