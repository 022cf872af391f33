#!/usr/bin/env bash
# make demo: installs what the demo needs (each step cached under bin/, so a
# second run starts in seconds), builds ragroute, then runs hack/demo, which
# starts and stops everything else. DEMO_STAY=1 keeps it all running after
# the answers, until Ctrl-C.
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
echo "demo: building bin/ragroute and bin/ragroute-demo" >&2
go build -o bin/ragroute ./cmd/ragroute
go build -o bin/ragroute-demo ./hack/demo
echo "demo: set-up took $((SECONDS - t0)) s" >&2
# exec: Ctrl-C reaches the demo, which stops what it started.
KUBEBUILDER_ASSETS="$assets" RAGROUTE_MILVUS_LITE="$milvus" exec bin/ragroute-demo
