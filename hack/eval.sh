#!/usr/bin/env bash
# make eval: runs `ragroute eval` on EVAL_CORPUS / EVAL_QUESTIONS against a
# Milvus Lite on a free loopback port, writes EVAL_JSON when set. The
# embedder is the local all-MiniLM-L6-v2 (hack/models.sh) unless
# EMBEDDING_BASE_URL and EMBEDDING_MODEL (EMBEDDING_DIM, default 384) name
# another. Everything started here is stopped by its PID on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/dev.jsonl}"
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
  rm -rf "$data"
}
trap cleanup EXIT

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
go run "$root/cmd/ragroute" eval --corpus "$EVAL_CORPUS" --questions "$EVAL_QUESTIONS" \
  --milvus-uri "http://127.0.0.1:$port" --embedding-base-url "$EMBEDDING_BASE_URL" \
  --embedding-model "$EMBEDDING_MODEL" --dimensions "${EMBEDDING_DIM:-384}" ${EVAL_JSON:+--json "$EVAL_JSON"}
