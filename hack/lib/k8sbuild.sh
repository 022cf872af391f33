# Shared by hack/testbed.sh and hack/node.sh: build_kubernetes MODULE DEST
# BIN… builds each of Kubernetes' commands BIN (k8s.io/kubernetes/cmd/BIN)
# from the folder MODULE, whose go.mod pins k8s.io/kubernetes, into DEST.
# Each binary is stamped with the pin, so a change of it rebuilds them.
# Source it after defining log.
build_kubernetes() {
  local module="$1" dest="$2"
  shift 2
  local stamp version bin start
  stamp="$(sha256sum "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"
  version="$(sed -n 's/^require k8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$module/go.mod")"
  for bin in "$@"; do
    if [ -x "$dest/$bin" ] && [ "$(cat "$dest/.$bin.stamp" 2>/dev/null)" = "$stamp" ]; then
      continue
    fi
    log "building $bin $version from the Go module proxy (several minutes on first run; cached in ${dest#"$root"/})"
    start=$SECONDS
    (cd "$module" && go build -trimpath \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)" \
      -o "$dest/$bin" "k8s.io/kubernetes/cmd/$bin")
    echo "$stamp" > "$dest/.$bin.stamp"
    log "built $bin in $((SECONDS - start))s"
  done
}
