#!/usr/bin/env bash
# with-heartbeat.sh WHAT EXPECTED_SECONDS COMMAND…: runs COMMAND and says
# every 30 s that it is still WHAT, for the install steps of the Makefile
# (hack/lib/heartbeat.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
what="$1" expected="$2"
shift 2
# shellcheck source=hack/lib/heartbeat.sh
. "$root/hack/lib/heartbeat.sh"
heartbeat_start "$what" "$expected"
status=0
"$@" || status=$?
heartbeat_stop
exit "$status"
