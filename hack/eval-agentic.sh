#!/usr/bin/env bash
# make eval-agentic: runs `ragroute eval-agentic` on EVAL_CORPUS /
# EVAL_QUESTIONS (default test/eval/multipart.jsonl): every question as a
# whole turn through the route's turn code in single-round and in agentic
# mode, with a real chat model, against a Milvus Lite on a free loopback
# port. The embedder is the local all-MiniLM-L6-v2 unless EMBEDDER or
# EMBEDDING_BASE_URL name another (as for make eval); the chat model is the
# local Qwen2.5-Coder-1.5B-Instruct (hack/models.sh; EVAL_CHAT=qwen-0.5b or
# smollm2 for the others) unless EVAL_CHAT_URL and EVAL_CHAT_MODEL name any
# OpenAI-compatible one (its key in RAGROUTE_MODEL_API_KEY). The route
# body reranks with the local ms-marco-MiniLM-L-12-v2 cross-encoder, as
# the sample route does, unless EVAL_RERANK=0 or RERANK_BASE_URL names
# another /rerank endpoint; the route's other settings are its defaults
# (retrieval.maxFragments 6).
# EVAL_AGENTIC_LIMIT runs the first N questions, EVAL_AGENTIC_MODES a comma
# list of modes (singleRound, agentic), EVAL_AGENTIC_CONCURRENCY turns at
# once (default 1: llama.cpp serves one), EVAL_AGENTIC_JSON writes the
# report; EVAL_AGENTIC_ARGS passes more flags (e.g. --context-tokens 2048 --tool-protocol json).
# Vectors are cached as for make eval (EVAL_VECTOR_CACHE). Everything
# started here is stopped by its PID on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/multipart.jsonl}"
: "${EVAL_VECTOR_CACHE=$root/bin/eval-cache}"
prog=eval-agentic
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
[ -z "${EVAL_AGENTIC_LIMIT:-}" ] || args+=(--limit "$EVAL_AGENTIC_LIMIT")
[ -z "${EVAL_AGENTIC_MODES:-}" ] || args+=(--modes "$EVAL_AGENTIC_MODES")
[ -z "${EVAL_AGENTIC_CONCURRENCY:-}" ] || args+=(--concurrency "$EVAL_AGENTIC_CONCURRENCY")
[ -z "${EVAL_AGENTIC_JSON:-}" ] || args+=(--json "$EVAL_AGENTIC_JSON")
# shellcheck disable=SC2206 # extra flags split on spaces, on purpose
[ -z "${EVAL_AGENTIC_ARGS:-}" ] || args+=($EVAL_AGENTIC_ARGS)
"${ragroute[@]}" eval-agentic "${corpus_flags[@]}" --chat-base-url "$EVAL_CHAT_URL" --chat-model "$EVAL_CHAT_MODEL" "${args[@]}"
