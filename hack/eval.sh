#!/usr/bin/env bash
# make eval: runs `ragroute eval` on EVAL_CORPUS / EVAL_QUESTIONS against a
# Milvus Lite on a free loopback port, writes EVAL_JSON when set. The
# embedder is the local all-MiniLM-L6-v2 (hack/models.sh) unless
# EMBEDDER=e5 picks the local multilingual-e5-small (hack/e5.sh: prefixes
# "query: " / "passage: ", 512 input tokens) or EMBEDDING_BASE_URL and
# EMBEDDING_MODEL (EMBEDDING_DIM, default 384) name another.
# EMBEDDING_QUERY_PREFIX / EMBEDDING_DOCUMENT_PREFIX and
# EVAL_MAX_INPUT_TOKENS (ragroute eval's default: 256) go to ragroute eval
# for any embedder; the embedded vectors are kept between runs, per
# embedder, in EVAL_VECTOR_CACHE (default bin/eval-cache; empty: none); RAGROUTE_BIN runs that binary instead of
# `go run ./cmd/ragroute`. The cross-encoder rows rescore with the local
# ms-marco-MiniLM-L-12-v2 (hack/models.sh run rerank) unless EVAL_RERANK=0
# or RERANK_BASE_URL names another /rerank endpoint. EVAL_PEER scores
# another system's results beside ragroute's (a make compare COMPARE_JSON:
# LlamaIndex's, without ingesting them again). Everything started
# here is stopped by its PID on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/dev.jsonl}"
: "${EVAL_VECTOR_CACHE=$root/bin/eval-cache}"
prog=eval
# shellcheck source=lib/services.sh
. "$root/hack/lib/services.sh"
start_embedder
start_milvus
start_reranker
eval_command
args=()
[ -z "${RERANK_BASE_URL:-}" ] || args+=(--rerank-base-url "$RERANK_BASE_URL")
[ -z "${EVAL_VECTOR_CACHE:-}" ] || args+=(--vector-cache "$EVAL_VECTOR_CACHE")
[ -z "${EVAL_JSON:-}" ] || args+=(--json "$EVAL_JSON")
[ -z "${EVAL_PEER:-}" ] || args+=(--peer "$EVAL_PEER")
"${ragroute[@]}" eval "${corpus_flags[@]}" "${args[@]}"
