#!/usr/bin/env bash
# make bench-scale: how search cost, ingestion and memory grow with the
# corpus (test/scalecorpus; docs/performance.md "As the corpus grows").
# The Argo CD corpus at SCALE_MULTIPLES (1,2,5,10: perturbed copies), the
# OpenTelemetry docs (SCALE_OTEL, by default ../shared/eval/corpus/
# opentelemetry; left out with a note when absent) and both together, each
# on its own Milvus Lite with the hashing embedder; at 1× also ingestion
# through the local all-MiniLM-L6-v2 (hack/models.sh, one thread as
# make compare-perf runs it) at concurrency 1 and 2, and that embedder's
# rate alone (SCALE_EMBEDDER=hash leaves it out), then the same through
# two processes of it called in turn (SCALE_EMBEDDER_PROCESSES=1 leaves
# that out; the embedder this script starts only). SCALE_QUERIES searches
# are timed per kind and size, SCALE_ROUTE_SEARCHES asked of the route
# before its RSS is read. BENCH_JSON=path writes the figures as JSON;
# RAGROUTE_BIN replaces the binary built here.
set -euo pipefail
export MODEL_THREADS="${MODEL_THREADS:-1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
prog=bench-scale
# shellcheck source=lib/services.sh
. "$root/hack/lib/services.sh"

bin="${RAGROUTE_BIN:-}"
if [ -z "$bin" ]; then
  bin="$data/ragroute"
  (cd "$root" && go build -o "$bin" ./cmd/ragroute)
fi
args=()
if [ "${SCALE_EMBEDDER:-real}" != hash ]; then
  given="${EMBEDDING_BASE_URL:-}"
  start_embedder
  args+=(-scalecorpus.embedding-base-url "$EMBEDDING_BASE_URL" -scalecorpus.embedding-model "$EMBEDDING_MODEL")
  if [ "${SCALE_EMBEDDER_PROCESSES:-2}" = 2 ] && [ -z "$given" ] && [ "${EMBEDDER:-minilm}" = minilm ]; then
    port="$(free_port)"
    "$root/hack/models.sh" run embed "$port" >"$data/embedder-2.log" 2>&1 &
    pids+=($!)
    wait_port "$port" "${pids[-1]}" "second embedder" "http://127.0.0.1:$port/health"
    args+=(-scalecorpus.embedding-base-url-2 "http://127.0.0.1:$port/v1")
  fi
fi
json=""
[ -z "${BENCH_JSON:-}" ] || json="$(cd "$(dirname "$BENCH_JSON")" && pwd)/$(basename "$BENCH_JSON")"

cd "$root"
RAGROUTE_MILVUS_LITE="$(hack/milvus-lite.sh)" RAGROUTE_BIN="$bin" BENCH_JSON="$json" \
  go test ./test/scalecorpus -run '^TestCorpusScale$' -count=1 -v -timeout 60m -args \
  -scalecorpus.multiples="${SCALE_MULTIPLES:-1,2,5,10}" -scalecorpus.otel="${SCALE_OTEL:-$root/../shared/eval/corpus/opentelemetry}" \
  -scalecorpus.queries="${SCALE_QUERIES:-30}" -scalecorpus.route-searches="${SCALE_ROUTE_SEARCHES:-50}" \
  -scalecorpus.concurrency-1 "${args[@]}"
