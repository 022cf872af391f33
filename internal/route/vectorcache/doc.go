// Package vectorcache keeps the vectors of the grounding check across
// turns: the sentences of the packed fragments change only with the
// index, so a route embeds each once (Embedder) and keeps its vector in
// memory or, shared by its replicas, in its Redis, sealed for its key.
package vectorcache
