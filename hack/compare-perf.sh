#!/usr/bin/env bash
# make compare-perf: ragroute's throughput and latency beside LlamaIndex's
# streaming query engine, on the same local embedder (all-MiniLM-L6-v2 on
# llama.cpp, hack/models.sh), Milvus Lite and instant scripted chat model,
# asked the same questions through each one's OpenAI-compatible streaming
# endpoint: one turn at a time, then PERF_STREAMS (64) streams for
# PERF_DURATION (30s). Then, unless PERF_UNSEEN=0, the same over questions
# no phase asked before ("sequential unseen", "64 streams unseen"): one per
# section heading of the corpus and the unanswerable questions
# (EVAL_UNANSWERABLE, test/eval/dev-unanswerable.jsonl), each asked once
# (docs/performance.md). hack/perf does the rest and prints the table and
# the goals of docs/performance.md; BENCH_JSON=path writes both as JSON.
# PERF_SYSTEMS picks the systems (llamaindex-dense, llamaindex-hybrid,
# ragroute, ragroute-dense: the same route searching the text's dense
# vectors only, ragroute-cached); PERF_VARIED_ANSWERS=1 numbers every
# answer's sentences so that none repeats (the grounding check then embeds
# every sentence it judges); RAGROUTE_BIN replaces the binary built here.
# Everything started here is stopped by its PID on exit.
#
# The embedder runs one thread (MODEL_THREADS, default 1 here): on a 2-core
# machine it shares the cores with Milvus, the system measured and the
# load, and llama.cpp's threads wait for each other by spinning, which
# doubles the CPU an embedding costs once another process is busy (both
# systems alike). It runs with four slots (hack/models.sh).
set -euo pipefail
export MODEL_THREADS="${MODEL_THREADS:-1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/dev.jsonl}"
: "${EVAL_UNANSWERABLE:=$root/test/eval/dev-unanswerable.jsonl}"
prog=compare-perf
# shellcheck source=lib/services.sh
. "$root/hack/lib/services.sh"
# shellcheck source=lib/compare-venv.sh
. "$root/hack/lib/compare-venv.sh"

bin="${RAGROUTE_BIN:-}"
if [ -z "$bin" ]; then
  bin="$data/ragroute"
  (cd "$root" && go build -o "$bin" ./cmd/ragroute)
fi
start_embedder
embedder_pid="${pids[-1]}"
start_milvus
milvus_pid="${pids[-1]}"

cd "$root"
go run ./hack/perf -ragroute "$bin" -python "$venv/bin/python" \
  -corpus "$EVAL_CORPUS" -questions "$EVAL_QUESTIONS" -unanswerable "$EVAL_UNANSWERABLE" -unseen="${PERF_UNSEEN:-1}" \
  -milvus-uri "http://127.0.0.1:$milvus_port" -milvus-pid "$milvus_pid" \
  -embedding-base-url "$EMBEDDING_BASE_URL" -embedding-model "$EMBEDDING_MODEL" -dimensions "${EMBEDDING_DIM:-384}" \
  -embedder-pid "$embedder_pid" -max-input-tokens "${EVAL_MAX_INPUT_TOKENS:-256}" \
  -streams "${PERF_STREAMS:-64}" -duration "${PERF_DURATION:-30s}" \
  ${PERF_SYSTEMS:+-systems "$PERF_SYSTEMS"} ${PERF_VARIED_ANSWERS:+-varied-answers} -data "$data" ${BENCH_JSON:+-json "$BENCH_JSON"}
