// Package route is the route runtime behind `ragroute serve`: one turn is a
// chat model offered search_knowledge for ONE round of tools, the tool body
// (exact cache → embed → hybrid search under the ACL filter → floors →
// rerank → one fragment per document → reassembly), the packing of
// fragments into what is left of the context window, and the streamed,
// cited answer; plus the HTTP API that submits turns and streams their
// events. It imports nothing from Kubernetes.
package route
