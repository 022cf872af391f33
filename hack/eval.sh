#!/usr/bin/env bash
# make eval: starts Milvus Lite on a free loopback port, runs `ragroute
# eval` on EVAL_CORPUS / EVAL_QUESTIONS with the embedder at
# EMBEDDING_BASE_URL (EMBEDDING_MODEL, EMBEDDING_DIM), writes EVAL_JSON when
# set, and stops Milvus Lite by its PID.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
: "${EVAL_CORPUS:=$root/test/eval/corpus/argocd}"
: "${EVAL_QUESTIONS:=$root/test/eval/dev.jsonl}"
if [ -z "${EMBEDDING_BASE_URL:-}" ] || [ -z "${EMBEDDING_MODEL:-}" ]; then
  echo "make eval needs an embedder: set EMBEDDING_BASE_URL and EMBEDDING_MODEL (and EMBEDDING_DIM, default 384)." >&2
  echo "The local embedder server arrives with the 'real local models' issue." >&2
  exit 2
fi
milvus="$("$root/hack/milvus-lite.sh")"
data="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$milvus" server --data-dir "$data/milvus" --host 127.0.0.1 --port "$port" >"$data/milvus.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done
go run "$root/cmd/ragroute" eval --corpus "$EVAL_CORPUS" --questions "$EVAL_QUESTIONS" \
  --milvus-uri "http://127.0.0.1:$port" --embedding-base-url "$EMBEDDING_BASE_URL" \
  --embedding-model "$EMBEDDING_MODEL" --dimensions "${EMBEDDING_DIM:-384}" ${EVAL_JSON:+--json "$EVAL_JSON"}
