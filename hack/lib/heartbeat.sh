# Shared by the install scripts: a long step says every 30 s that it is
# still running, how long it has run and about how long is left, so a first
# run is never silent for a minute. heartbeat_start WHAT EXPECTED_SECONDS
# starts it in the background (EXPECTED_SECONDS: the step's measured time on
# the 2-core machine), heartbeat_stop ends it; one at a time per shell.
# It also ends with the shell that started it, so a step that fails under
# set -e leaves nothing ticking. It says so with the sourcing script's
# log, or on stderr where the script defines none.
declare -F log >/dev/null || log() { echo "$*" >&2; }

heartbeat_start() {
  heartbeat_stop
  local what="$1" expected="$2" began=$SECONDS shell=$$
  (
    # Asleep in wait, not in sleep, so heartbeat_stop ends it at once.
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "${RAGROUTE_HEARTBEAT_SECONDS:-30}" </dev/null >/dev/null 2>&1 &
      nap=$!
      wait "$nap"
      kill -0 "$shell" 2>/dev/null || exit 0
      elapsed=$((SECONDS - began))
      if [ "$elapsed" -lt "$expected" ]; then
        log "still $what: ${elapsed}s so far, about $((expected - elapsed))s left"
      else
        log "still $what: ${elapsed}s so far, longer than the ${expected}s it usually takes"
      fi
    done
  ) >&2 &
  heartbeat_pid=$!
}

heartbeat_stop() {
  if [ -n "${heartbeat_pid:-}" ]; then
    kill "$heartbeat_pid" 2>/dev/null || true
    wait "$heartbeat_pid" 2>/dev/null || true
    heartbeat_pid=
  fi
}
