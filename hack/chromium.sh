#!/usr/bin/env bash
# Installs Debian's chromium (the route page's browser test drives it
# headless with chromedp) unless /usr/bin/chromium is there, and prints its
# path. Nothing is downloaded when a test runs; the test never starts a
# browser it did not find here.
set -euo pipefail

bin=/usr/bin/chromium
log() { echo "chromium: $*" >&2; }

if [ ! -x "$bin" ]; then
  if [ -z "${RAGROUTE_APT_UPDATED:-}" ]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    export RAGROUTE_APT_UPDATED=1
  fi
  log "apt-get install chromium (once; about 100 MB)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
fi
echo "$bin"
