# Shared by hack/testbed.sh and hack/node.sh: build_kubernetes MODULE DEST
# SECONDS BIN… builds each of Kubernetes' commands BIN
# (k8s.io/kubernetes/cmd/BIN) from the folder MODULE, whose go.mod pins
# k8s.io/kubernetes, into DEST; SECONDS is about how long that takes the
# first time on 2 cores (the heartbeat's estimate).
# Each binary is stamped with the pin, so a change of it rebuilds them.
# Source it after defining log and sourcing hack/lib/heartbeat.sh.
build_kubernetes() {
  local module="$1" dest="$2" expected="$3"
  shift 3
  local stamp version bin start missing=() pkgs=() out
  stamp="$(sha256sum "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
  version="$(sed -n 's/^require k8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$module/go.mod")"
  for bin in "$@"; do
    if [ -x "$dest/$bin" ] && [ "$(cat "$dest/.$bin.stamp" 2>/dev/null)" = "$stamp" ]; then
      continue
    fi
    missing+=("$bin")
    pkgs+=("k8s.io/kubernetes/cmd/$bin")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  # One go build for all of them: one package graph, so the packages they
  # share are compiled once and the compiles of all of them fill the cores
  # together (three builds one after another measured 1,214 s cold on 2
  # cores; README, "What make demo runs where").
  log "building ${missing[*]} $version from the Go module proxy (about $((expected / 60)) min on 2 cores the first time; cached in ${dest#"$root"/})"
  start=$SECONDS
  out="$(mktemp -d "$dest/.build.XXXXXX")"
  heartbeat_start "building ${missing[*]}" "$expected"
  (cd "$module" && go build -trimpath \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)" \
    -o "$out/" "${pkgs[@]}") || { heartbeat_stop; rm -rf "$out"; return 1; }
  heartbeat_stop
  for bin in "${missing[@]}"; do
    mv -f "$out/$bin" "$dest/$bin"
    echo "$stamp" > "$dest/.$bin.stamp"
  done
  rmdir "$out"
  log "built ${missing[*]} in $((SECONDS - start))s"
}
