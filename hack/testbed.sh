#!/usr/bin/env bash
# Installs the envtest test bed under bin/k8s and prints its path (for
# KUBEBUILDER_ASSETS): etcd (and redis-server, for route tests) from Debian, kube-apiserver,
# kube-controller-manager and kube-scheduler built from the Go module proxy (pinned in
# hack/testbed/go.mod), kubectl from the machine or built the same way, and
# kwok (simulated nodes: pods run and Jobs complete without a container
# runtime) installed from the Go module proxy with its default stages.
# Built binaries are cached; a change of the pin rebuilds them.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/bin/k8s"
mkdir -p "$dest"
log() { echo "testbed: $*" >&2; }

# shellcheck source=hack/lib/apt.sh
. "$root/hack/lib/apt.sh"
# shellcheck source=hack/lib/heartbeat.sh
. "$root/hack/lib/heartbeat.sh"
# shellcheck source=hack/lib/k8sbuild.sh
. "$root/hack/lib/k8sbuild.sh"

# etcd: Debian's etcd-server. Its service is not started here; envtest runs
# its own etcd on a free port with a temporary data dir.
if ! command -v etcd >/dev/null 2>&1; then
  apt_install etcd-server
fi
ln -sf "$(command -v etcd)" "$dest/etcd"

# redis-server: the shared cache and turn log of multi-replica routes.
if ! command -v redis-server >/dev/null 2>&1; then
  apt_install redis-server
fi

# kube-apiserver, kube-controller-manager, kube-scheduler (and kubectl if
# the machine has none): one pinned module, one build cache, one stamp.
wanted=(kube-apiserver kube-controller-manager kube-scheduler)
command -v kubectl >/dev/null 2>&1 || wanted+=(kubectl)
build_kubernetes "$root/hack/testbed" "$dest" 540 "${wanted[@]}"
if [ ! -x "$dest/kubectl" ]; then
  ln -sf "$(command -v kubectl)" "$dest/kubectl"
fi

# kwok: its own module (it pins an older client-go than the test bed's
# Kubernetes), installed into a versioned folder. kwok ships no stages in
# its binary: its "fast" stages (node initialize; pod ready, complete,
# delete) are copied from the same module version.
kwok_version="${KWOK_VERSION:-v0.8.0}"
kwok_dir="$root/bin/kwok-$kwok_version"
if [ ! -x "$kwok_dir/kwok" ] || [ ! -s "$kwok_dir/kwok-stages.yaml" ]; then
  log "installing kwok $kwok_version from the Go module proxy (about 2 minutes on first run; cached in bin/kwok-$kwok_version)"
  start=$SECONDS
  mkdir -p "$kwok_dir"
  heartbeat_start "installing kwok" 120
  GOBIN="$kwok_dir" go install "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
  heartbeat_stop
  # Outside any module, so no go.sum is touched.
  tmp="$(mktemp -d)"
  src="$(cd "$tmp" && go mod download -json "sigs.k8s.io/kwok@$kwok_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  rmdir "$tmp"
  stages="$src/kustomize/stage"
  {
    for f in node/fast/node-initialize.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "---"
      cat "$stages/$f"
    done
  } > "$kwok_dir/kwok-stages.yaml.tmp"
  mv "$kwok_dir/kwok-stages.yaml.tmp" "$kwok_dir/kwok-stages.yaml"
  log "installed kwok in $((SECONDS - start))s"
fi
ln -sf "$kwok_dir/kwok" "$dest/kwok"
ln -sf "$kwok_dir/kwok-stages.yaml" "$dest/kwok-stages.yaml"

echo "$dest"
