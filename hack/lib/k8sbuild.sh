# Shared by hack/testbed.sh and hack/node.sh: build_kubernetes MODULE DEST
# SECONDS BIN… builds each of Kubernetes' commands BIN
# (k8s.io/kubernetes/cmd/BIN) from the folder MODULE, whose go.mod pins
# k8s.io/kubernetes, into DEST; SECONDS is about how long all of them take
# the first time on 2 cores (the heartbeat's estimate). Each binary is
# stamped with the pin, so a change of it rebuilds them. One go build per
# binary: the build cache shares their common packages, and one go build
# for all three of the test bed's measured no faster cold (491 s against
# 492 s). Source it after defining log and sourcing hack/lib/heartbeat.sh.
build_kubernetes() {
  local module="$1" dest="$2" expected="$3"
  shift 3
  local stamp version bin start missing=()
  stamp="$(sha256sum "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
  version="$(sed -n 's/^require k8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$module/go.mod")"
  for bin in "$@"; do
    if [ ! -x "$dest/$bin" ] || [ "$(cat "$dest/.$bin.stamp" 2>/dev/null)" != "$stamp" ]; then
      missing+=("$bin")
    fi
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  log "building ${missing[*]} $version from the Go module proxy (about $((expected / 60)) min on 2 cores the first time; cached in ${dest#"$root"/})"
  heartbeat_start "building ${missing[*]}" "$expected"
  for bin in "${missing[@]}"; do
    start=$SECONDS
    (cd "$module" && go build -trimpath \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)" \
      -o "$dest/$bin" "k8s.io/kubernetes/cmd/$bin") || { heartbeat_stop; return 1; }
    echo "$stamp" > "$dest/.$bin.stamp"
    log "built $bin in $((SECONDS - start))s"
  done
  heartbeat_stop
}
