// Package assembly builds a route from its config: the one place a
// turn.Engine (internal/route/turn) and its retrieval.Searcher are made
// from a podconfig.RouteConfig, so what the evaluations score is what the
// operator ships.
//
// NewSearcher and NewEngine wire the turn from the config over Parts, the
// backends a caller already made (the evaluations' collections, a test's
// scripted model); a part left nil is built from the config the one way
// `ragroute serve` builds it. In particular a searcher embeds its
// questions on one shared client of the store's embedder (model.Shared,
// replicaEmbedder), whose Finishing lane the grounding check of the turns
// over it takes, whether the caller brought the client or not. The
// clients of ragroute's pods (Milvus, the embedders, the chat model) are
// made here for serve, ingest and the evaluations alike; package serving
// (Open) is what `ragroute serve` runs around them: Redis, the generation
// watch, the authenticator and the query API's options.
//
// Secrets come in through Secrets (cmd passes the environment); nothing
// here reads the environment, and nothing here imports Kubernetes.
// test/architecture keeps this the only package besides their own that
// constructs an Engine or a Searcher or changes their fields, tests
// included.
package assembly
