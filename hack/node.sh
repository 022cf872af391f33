#!/usr/bin/env bash
# Installs the test bed's real node under bin/node and prints its path (for
# RAGROUTE_NODE_BIN): containerd, runc, the CNI plugins and iptables from
# Debian; kubelet and kube-proxy v1.35 built from the Go module proxy
# (pinned in hack/node/go.mod: why v1.35 is in hack/node/tools.go); and
# the images the node imports instead of pulling, built with hack/image:
# the pod sandbox (hack/node/pause) and a probe (hack/node/probe). Built
# files are cached; a change of the pin or the sources rebuilds them.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/bin/node"
mkdir -p "$dest"
log() { echo "node: $*" >&2; }
# shellcheck source=hack/lib/apt.sh
. "$root/hack/lib/apt.sh"
# shellcheck source=hack/lib/heartbeat.sh
. "$root/hack/lib/heartbeat.sh"
# shellcheck source=hack/lib/k8sbuild.sh
. "$root/hack/lib/k8sbuild.sh"

missing=()
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
fi

build_kubernetes "$root/hack/node" "$dest" 420 kubelet kube-proxy

# The node's images: name, binary source (in hack/node's module), tarball.
images_stamp="$(cat "$root"/hack/node/pause/*.go "$root"/hack/node/probe/*.go "$root"/hack/image/*.go "$root"/hack/image/go.sum | sha256sum | cut -c1-16)"
if [ "$(cat "$dest/.images.stamp" 2>/dev/null)" != "$images_stamp" ]; then
  for image in pause probe; do
    (cd "$root/hack/node" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$dest/$image" "./$image")
    (cd "$root/hack/image" && go run . --binary "$dest/$image" --entrypoint "/$image" \
      --name "ragroute.local/$image:bed" --out "$dest/$image.tar") >&2
  done
  echo "$images_stamp" > "$dest/.images.stamp"
fi

echo "$dest"
