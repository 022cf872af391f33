// Package knowledge talks to Milvus: connections and what kind of failure
// a Milvus error is (ClassifyError, so callers never read its text), the
// chunk collection's schema, hybrid search under the ACL filter (BM25
// over text the store's lexical analyzer prepared, rows and queries
// alike), upserts and the alias swap between index generations. It
// imports nothing from Kubernetes; the operator and the route runtime
// both use it.
package knowledge
