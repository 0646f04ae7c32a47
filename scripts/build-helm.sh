#!/usr/bin/env bash
# Builds helm (the charts' lint, template and render tool) from the Go module
# proxy at a pinned version and caches it by version and Go version, like
# dev/devcluster/src/build-oci-tools.sh: no internet here but the module proxy.
# Prints the directory holding `helm` on its last line of stdout.
set -euo pipefail

HELM_VERSION="${QUARRY_HELM_VERSION:-v3.18.4}"
# the Kubernetes version helm assumes without a cluster (`helm template`, `helm lint`), which the
# charts' kubeVersion is checked against: what helm's Makefile stamps from its client-go (v0.33 for
# v3.18), since `go install` alone leaves helm's fallback, v1.20
HELM_K8S_MINOR="${QUARRY_HELM_K8S_MINOR:-33}"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
GO_VERSION="$(go env GOVERSION)"
OUT="$CACHE_ROOT/bin/helm-$HELM_VERSION-k8s1.$HELM_K8S_MINOR-$GO_VERSION"
mkdir -p "$OUT"
# a test run and the demo setting up at once must not build into one temp dir
exec 9>"$CACHE_ROOT/build-helm.lock"
flock 9
# -mod=mod: helm's go.sum is honoured but the proxy answers for what it lacks
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

if [ ! -x "$OUT/helm" ]; then
  echo "[build-helm] building helm $HELM_VERSION" >&2
  k8s="-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR"
  k8s="$k8s -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR"
  GOBIN="$OUT/.tmp" go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION $k8s" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
  mv "$OUT/.tmp/helm" "$OUT/helm"
  rmdir "$OUT/.tmp"
fi
echo "$OUT"
