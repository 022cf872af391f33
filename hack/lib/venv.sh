# Shared by the scripts that install pinned Python packages under bin/.
# venv_install NAME REQUIREMENTS CHECK: a virtualenv bin/NAME holding
# REQUIREMENTS (a pinned requirements.txt), rebuilt when that file changes
# or the venv's CHECK (a path inside it) is missing. Needs root set; says
# it is still at work every 30 s (hack/lib/heartbeat.sh).
venv_install() {
  local venv="$root/bin/$1" req="$2" check="$root/bin/$1/$3" stamp
  stamp="$(sha256sum "$req" | cut -c1-16)"
  if [ ! -x "$check" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "$1: installing into bin/$1" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    # shellcheck source=hack/lib/heartbeat.sh
    . "$root/hack/lib/heartbeat.sh"
    heartbeat_start "installing $1" 60
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
    heartbeat_stop
    echo "$stamp" > "$venv/.stamp"
  fi
}
