#!/usr/bin/env bash
# Installs the official OpenAI Python SDK (pinned in
# hack/openai-sdk/requirements.txt) into a virtualenv under bin/openai-sdk
# and prints the path of its python. The facade's compatibility test runs
# hack/openai-sdk/client.py with it against `ragroute serve` on loopback.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/bin/openai-sdk"
req="$root/hack/openai-sdk/requirements.txt"
stamp="$(sha256sum "$req" | cut -c1-16)"

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "openai-sdk: installing into bin/openai-sdk" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
  echo "$stamp" > "$venv/.stamp"
fi
echo "$venv/bin/python"
