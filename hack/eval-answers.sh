#!/usr/bin/env bash
# make eval-answers: runs `ragroute eval-answers` on EVAL_CORPUS /
# EVAL_QUESTIONS: every question as a whole turn through the route as
# shipped (EVAL_ROUTE, the sample route by default, its cross-encoder the
# local ms-marco-MiniLM-L-12-v2 unless EVAL_RERANK=0), per answer mode, with a real chat model, against a Milvus Lite on a
# free loopback port; also prints the grounding threshold's calibration
# curve. The embedder is the local all-MiniLM-L6-v2 unless EMBEDDER or
# EMBEDDING_BASE_URL name another (as for make eval); the chat model is the
# local Qwen2.5-Coder-1.5B-Instruct (hack/models.sh; EVAL_CHAT=qwen-0.5b or
# smollm2 for the others) unless EVAL_CHAT_URL and
# EVAL_CHAT_MODEL name any OpenAI-compatible one (its key in
# RAGROUTE_MODEL_API_KEY). EVAL_ANSWERS_LIMIT runs the first N questions,
# EVAL_ANSWERS_MODES a comma list of modes (generative, generative+strip,
# fallback, extractive), EVAL_ANSWERS_CONCURRENCY turns at once (default
# 1: llama.cpp serves one), EVAL_ANSWERS_JSON writes the report;
# EVAL_ANSWERS_ARGS passes more flags (e.g. --threshold 0.5). Vectors are
# cached as for make eval (EVAL_VECTOR_CACHE). Everything started here is
# stopped by its PID on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/dev.jsonl}"
: "${EVAL_VECTOR_CACHE=$root/bin/eval-cache}"
prog=eval-answers
# shellcheck source=lib/services.sh
. "$root/hack/lib/services.sh"
start_embedder
start_chat
start_milvus
start_reranker
eval_command
args=()
[ -z "${RERANK_BASE_URL:-}" ] || args+=(--rerank-base-url "$RERANK_BASE_URL")
[ -z "${EVAL_VECTOR_CACHE:-}" ] || args+=(--vector-cache "$EVAL_VECTOR_CACHE")
[ -z "${EVAL_ANSWERS_LIMIT:-}" ] || args+=(--limit "$EVAL_ANSWERS_LIMIT")
[ -z "${EVAL_ANSWERS_MODES:-}" ] || args+=(--modes "$EVAL_ANSWERS_MODES")
[ -z "${EVAL_ANSWERS_CONCURRENCY:-}" ] || args+=(--concurrency "$EVAL_ANSWERS_CONCURRENCY")
[ -z "${EVAL_ANSWERS_JSON:-}" ] || args+=(--json "$EVAL_ANSWERS_JSON")
# shellcheck disable=SC2206 # extra flags split on spaces, on purpose
[ -z "${EVAL_ANSWERS_ARGS:-}" ] || args+=($EVAL_ANSWERS_ARGS)
"${ragroute[@]}" eval-answers "${corpus_flags[@]}" --chat-base-url "$EVAL_CHAT_URL" --chat-model "$EVAL_CHAT_MODEL" \
  --grounding-curve "${args[@]}"
