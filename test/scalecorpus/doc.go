// Package scalecorpus measures how search cost, ingestion and memory grow
// with the corpus (`make bench-scale`, docs/performance.md "As the corpus
// grows"). Each size is its own Milvus Lite: `ragroute ingest` writes the
// corpus (wall time, chunks/s, its peak RSS and CPU, Milvus' CPU), the
// store's searches are timed one at a time with the CPU Milvus spent on
// each (dense, BM25, the four-primitive hybrid a route runs, and that
// hybrid under an ACL filter that denies half the corpus), and `ragroute
// serve` answers a fixed number of /v1/search calls before its RSS is
// read.
//
// The sizes: the Argo CD corpus (test/eval/corpus/argocd) once and as N
// copies, each copy after the first with its prose perturbed (perturb:
// seeded word substitutions and swaps, so BM25 and the vectors differ per
// copy); the OpenTelemetry docs (../shared/eval/corpus/opentelemetry) and
// both together when -scalecorpus.otel names them. Every document goes to
// one of two sources, alternately: one readable by "public", one by
// "group:ops" only, so the ACL-filtered search has half to deny.
//
// The embedder is testenv's hashing one, served over HTTP in the test
// process (as cheap as an embedder gets: ingestion measures ragroute and
// Milvus); -scalecorpus.embedding-base-url adds a 1× ingestion through a
// real one, and the embedder alone at the same batch size and
// concurrency, for the rate goal.
//
// `go test ./test/scalecorpus` (part of `make test`) runs 1× and 2× with
// a few queries and checks what must hold at any size; `make bench-scale`
// runs every size and prints the tables and goals (BENCH_JSON=path writes
// them as JSON).
//
// Environment: RAGROUTE_MILVUS_LITE (the test skips without it),
// RAGROUTE_BIN (a prebuilt ragroute; otherwise the test builds one),
// BENCH_JSON.
package scalecorpus
