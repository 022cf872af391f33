#!/usr/bin/env bash
# Builds kube-apiserver v1.30 (the oldest Kubernetes the chart is checked
# against) from the Go module proxy into bin/k8s-1.30 and prints its path,
# for RAGROUTE_KUBE_APISERVER_130 (TestChartOnKubernetes130). No binaries or
# OpenAPI schemas can be downloaded in this project's environments, so the
# API server itself is built, as hack/testbed.sh builds the current one.
# k8s.io/kubernetes v1.30 requires its staging modules at v0.0.0 with
# replace directives that a dependant does not inherit, so the module here
# replaces each with its v0.30 release. Cached: a second run only prints.
# Takes a few minutes and about 1 GB of module cache on first run.
set -euo pipefail

version="${KUBE_VERSION_130:-v1.30.14}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/bin/k8s-1.30"
bin="$dest/kube-apiserver"
if [ -x "$bin" ] && [ "$(cat "$dest/.version" 2>/dev/null)" = "$version" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
gomod="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
staging="v0.${version#v1.}"
{
  echo "module kubeapiserver130"
  echo
  echo "go 1.22"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  sed -n 's/^[[:space:]]*\(k8s\.io\/[a-z0-9-]*\) => \.\/staging\/.*$/\1/p' "$gomod" | while read -r m; do
    echo "	$m => $m $staging"
  done
  echo ")"
} > go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' > tools.go
echo "kube-apiserver-1.30: resolving $version" >&2
GOFLAGS=-mod=mod "$root/hack/with-heartbeat.sh" "resolving kube-apiserver $version's modules" 120 go mod tidy >&2
echo "kube-apiserver-1.30: building (several minutes on first run)" >&2
minor="$(echo "$version" | cut -d. -f2)"
"$root/hack/with-heartbeat.sh" "building kube-apiserver $version" 600 go build -trimpath \
  -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
  -o "$bin" k8s.io/kubernetes/cmd/kube-apiserver
echo "$version" > "$dest/.version"
echo "$bin"
