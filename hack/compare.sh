#!/usr/bin/env bash
# make compare: ragroute's retrieval side by side with LlamaIndex's default
# pipelines, on the same Milvus Lite, the same embedder and the same
# questions. hack/compare/llamaindex_retrieve.py ingests EVAL_CORPUS four
# ways (SentenceSplitter dense, SentenceSplitter + BM25 hybrid,
# MarkdownNodeParser + BM25 hybrid, MarkdownNodeParser then SentenceSplitter
# + BM25 hybrid) and writes the top 10 per question of EVAL_QUESTIONS to
# peer.json; `ragroute eval --peer` then scores those with its own scorer
# and prints one table. A configuration whose ingestion fails (Milvus
# refuses a node over its 65,535-byte VARCHAR) is a row with its reason, not
# the end of the run. COMPARE_JSON=path keeps peer.json; COMPARE_PEER_ONLY=1
# stops after writing it (no Go side).
#
# EVAL_QUESTIONS defaults to the dev set only for the Argo CD corpus (a
# folder named argocd). Another corpus without EVAL_QUESTIONS (the
# OpenTelemetry docs: EVAL_CORPUS=../shared/eval/corpus/opentelemetry, or a
# subfolder of it for a bounded run) has no questions: both sides then
# measure ingestion only (chunks, largest chunk, seconds, failures), every
# text embedded (no vector cache), and print one ingestion table.
#
# The embedder is the local all-MiniLM-L6-v2 (hack/models.sh) unless
# EMBEDDER=e5 picks the local multilingual-e5-small (hack/e5.sh) or
# EMBEDDING_BASE_URL and EMBEDDING_MODEL (EMBEDDING_DIM, default 384) name
# another. EMBEDDING_QUERY_PREFIX / EMBEDDING_DOCUMENT_PREFIX and
# EVAL_MAX_INPUT_TOKENS go to both sides alike, as in hack/eval.sh (e5 sets
# "query: " / "passage: " and 512); RAGROUTE_BIN replaces `go run`. LlamaIndex is pinned in hack/compare/requirements.txt and
# installed into bin/compare-venv when that file changes (~400 MB, ~1 min).
# ragroute's cross-encoder rows come as in hack/eval.sh (EVAL_RERANK=0
# leaves them out, RERANK_BASE_URL names another /rerank endpoint).
# Everything started here is stopped by its PID on exit.
#
# On a busy 2-core machine MODEL_THREADS=1 (read by hack/models.sh) keeps
# llama.cpp's query embeddings at ~15 ms: with 2 threads competing with
# other processes they stall for ~1 s each, on both sides of the table.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
if [ "$(basename "$EVAL_CORPUS")" = argocd ]; then
  : "${EVAL_QUESTIONS=$root/test/eval/dev.jsonl}"
fi
: "${EVAL_QUESTIONS:=}"
cache_flags=(--vector-cache "$root/bin/eval-cache")
[ -n "$EVAL_QUESTIONS" ] || cache_flags=() # ingestion is what is timed: embed every text
prog=compare
# shellcheck source=lib/services.sh
. "$root/hack/lib/services.sh"

# shellcheck source=lib/compare-venv.sh
. "$root/hack/lib/compare-venv.sh"

start_embedder
start_milvus
[ -z "$EVAL_QUESTIONS" ] || start_reranker # nothing to rerank without questions
port="$milvus_port"
eval_command # the same prefixes and input cut on both sides: embedder_flags

# The peer's collections (llamaindex_*) and ragroute's own do not collide.
if [ -n "$EVAL_QUESTIONS" ]; then
  log "LlamaIndex: ingesting and retrieving (four configurations)"
else
  log "LlamaIndex: ingesting (four configurations); no questions: ingestion only"
fi
# GRPC_VERBOSITY: Milvus Lite answers pymilvus's keepalive pings with a
# harmless "too_many_pings" GOAWAY that gRPC would log as an error.
GRPC_VERBOSITY="${GRPC_VERBOSITY:-NONE}" "$venv/bin/python" "$root/hack/compare/llamaindex_retrieve.py" \
  --corpus "$EVAL_CORPUS" --questions "$EVAL_QUESTIONS" --milvus-uri "http://127.0.0.1:$port" \
  --embedding-base-url "$EMBEDDING_BASE_URL" --embedding-model "$EMBEDDING_MODEL" \
  --dimensions "${EMBEDDING_DIM:-384}" "${embedder_flags[@]}" --out "$data/peer.json"
if [ -n "${COMPARE_JSON:-}" ]; then
  cp "$data/peer.json" "$COMPARE_JSON"
  log "LlamaIndex results written to $COMPARE_JSON"
fi
[ -z "${COMPARE_PEER_ONLY:-}" ] || exit 0

"${ragroute[@]}" eval "${corpus_flags[@]}" --peer "$data/peer.json" "${cache_flags[@]}" ${EVAL_JSON:+--json "$EVAL_JSON"} \
  ${RERANK_BASE_URL:+--rerank-base-url "$RERANK_BASE_URL"}
