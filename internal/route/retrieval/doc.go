// Package retrieval is the body of the turn's tools. Searcher is
// search_knowledge: exact cache (memory LRU, or shared in Redis) → embed →
// hybrid search of an Index under the ACL filter → similarity floor →
// rerank (KeepOrder, or a CrossEncoder endpoint) → strict floor → screen
// fragments first for a screen question (ClassifyIntent) → one fragment
// per document → reassembly of split sections. WebSearch is web_search.
// GenerationWatch keeps the index generation in the cache keys current;
// RelativeFloors sets the floors from the background similarity recorded on
// that generation.
// It knows nothing of turns, HTTP or identities: callers pass principals.
package retrieval
