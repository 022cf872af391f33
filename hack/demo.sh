#!/usr/bin/env bash
# make demo: installs what the demo needs (each step cached under bin/, so a
# second run starts in seconds), builds ragroute, then runs hack/demo, which
# starts and stops everything else. DEMO_STAY=1 keeps it all running after
# the answers, until Ctrl-C; DEMO_CHAT=qwen (the default), qwen-0.5b or
# smollm2 picks the local chat model (hack/demo/config.go has the rest).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
t0=$SECONDS
echo "demo: installing the test bed (etcd, kube-apiserver, kubectl; first run builds them from the Go module proxy)" >&2
assets="$(hack/testbed.sh)"
echo "demo: installing Milvus Lite" >&2
milvus="$(hack/milvus-lite.sh)"
echo "demo: installing the local models (first run compiles llama.cpp: ~10 min on 2 cores)" >&2
hack/models.sh install
# The chat model and the reranker are fetched on first use (Qwen 1.5B:
# 1.1 GB; DEMO_CHAT=smollm2 needs nothing more).
case "${DEMO_CHAT_URL:+url}:${DEMO_CHAT:-qwen}" in
url:*) ;;
*:qwen | *:qwen-0.5b) hack/models.sh fetch "${DEMO_CHAT:-qwen}" ;;
esac
hack/models.sh fetch rerank
echo "demo: building bin/ragroute and bin/ragroute-demo" >&2
go build -o bin/ragroute ./cmd/ragroute
go build -o bin/ragroute-demo ./hack/demo
echo "demo: set-up took $((SECONDS - t0)) s" >&2
# exec: Ctrl-C reaches the demo, which stops what it started.
KUBEBUILDER_ASSETS="$assets" RAGROUTE_MILVUS_LITE="$milvus" exec bin/ragroute-demo
