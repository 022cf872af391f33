#!/usr/bin/env bash
# Installs Milvus Lite (pinned in hack/milvus-lite/requirements.txt) into a
# virtualenv under bin/milvus-lite and prints the path of the command that
# runs it (hack/milvus-lite/run: `milvus-lite` with its threads bounded).
# Tests start `… server` themselves on a free loopback port and stop it by
# PID.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/hack/lib/venv.sh"
venv_install milvus-lite "$root/hack/milvus-lite/requirements.txt" bin/milvus-lite
echo "$root/hack/milvus-lite/run"
