#!/usr/bin/env bash
# Installs the official MCP Python SDK (pinned in
# hack/mcp-sdk/requirements.txt) into a virtualenv under bin/mcp-sdk and
# prints the path of its python. The MCP endpoint's compatibility test
# runs hack/mcp-sdk/client.py with it against `ragroute serve` on loopback.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/hack/lib/venv.sh"
venv_install mcp-sdk "$root/hack/mcp-sdk/requirements.txt" bin/python
echo "$root/bin/mcp-sdk/bin/python"
