// Package serving is the route as `ragroute serve` runs it in a pod: Open
// connects to the route's Milvus and Redis, builds what a pod adds to the
// turn (the generation watch, Redis' exact cache, vector cache and turn
// log, the authenticator, readiness and the model's health) and the query
// API's options around the turn.Engine and retrieval.Searcher that
// package assembly builds from the same config, as it builds them for the
// evaluations.
package serving
