#!/usr/bin/env bash
# Installs the official OpenAI Python SDK (pinned in
# hack/openai-sdk/requirements.txt) into a virtualenv under bin/openai-sdk
# and prints the path of its python. The facade's compatibility test runs
# hack/openai-sdk/client.py with it against `ragroute serve` on loopback.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/hack/lib/venv.sh"
venv_install openai-sdk "$root/hack/openai-sdk/requirements.txt" bin/python
echo "$root/bin/openai-sdk/bin/python"
