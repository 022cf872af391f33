#!/usr/bin/env bash
# Installs Milvus Lite (pinned in hack/milvus-lite/requirements.txt) into a
# virtualenv under bin/milvus-lite and prints the path of its `milvus-lite`
# command. Tests start `milvus-lite server` themselves on a free loopback
# port and stop it by PID.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/bin/milvus-lite"
req="$root/hack/milvus-lite/requirements.txt"
stamp="$(sha256sum "$req" | cut -c1-16)"

if [ ! -x "$venv/bin/milvus-lite" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "milvus-lite: installing into bin/milvus-lite" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  echo "$stamp" > "$venv/.stamp"
fi
echo "$venv/bin/milvus-lite"
