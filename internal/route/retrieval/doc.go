// Package retrieval is the body of the turn's tools. Searcher is
// search_knowledge: exact cache (memory LRU, or shared in Redis) → embed →
// hybrid search of an Index under the ACL filter (weighted RRF of the
// primitives) → confidence (a search too unsure of an on-topic gap finds
// nothing) → similarity floor → rerank (KeepOrder, or a CrossEncoder
// endpoint) → strict floor → screen fragments first for a screen question
// (ClassifyIntent) → per-document diversity (a margin and a cap, a
// dominant document's sections let in) → reassembly of split sections.
// Each I/O step runs under its own deadline and span; a call to the store
// first takes one of the replica's StoreSlots, outside that deadline, so a
// burst queues instead of failing. WebSearch is
// web_search. GenerationWatch keeps the index generation in the cache keys
// current, and says when it was built by another embedder or keyword
// analyzer than the route's (EmbedderMismatchError, AnalyzerMismatchError:
// the Searcher then searches nothing);
// RelativeFloors sets the floors from the background similarity
// recorded on that generation. Fragment is what a search hands the turn.
// It knows nothing of turns, HTTP or identities: callers pass principals.
package retrieval
