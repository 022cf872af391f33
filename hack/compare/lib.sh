# Helpers for hack/compare.sh, copied from hack/eval.sh (which stays as it
# is). Source it; it expects $data (the run's scratch folder, holding
# NAME.log for each server started) to be set before wait_port is called.

# free_port prints a free TCP port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_port PORT PID NAME [URL]: until PORT listens (and URL, if given, answers 200).
wait_port() {
  for _ in $(seq 1 300); do
    if (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && { [ -z "${4:-}" ] || curl -sf "$4" >/dev/null 2>&1; }; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || { echo "compare: $3 exited:" >&2; tail -20 "$data/$3.log" >&2; return 1; }
    sleep 0.1
  done
  echo "compare: $3 did not listen on :$1" >&2
  return 1
}
