# Shared by hack/testbed.sh and hack/node.sh: apt_install PACKAGE… installs
# Debian packages, updating the index once per shell. Source it after
# defining log.
apt_install() {
  if [ -z "${RAGROUTE_APT_UPDATED:-}" ]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    export RAGROUTE_APT_UPDATED=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}
