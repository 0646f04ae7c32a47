#!/usr/bin/env bash
# Builds Prometheus (the server: scrape, TSDB, HTTP query API) from the Go module proxy at a pinned
# version and caches it by version and Go version, like scripts/build-helm.sh. Only
# dev/dashboard/src/render-dashboard.ts uses it (the dashboard screenshot in docs/operator-guide.md);
# no test or CI step does. Its web UI's assets are not built (the API is all the renderer needs).
# Prints the directory holding `prometheus` on its last line of stdout.
set -euo pipefail

# Go module v0.316.0 is Prometheus 3.16.0 (the module's VERSION file)
PROMETHEUS_MODULE_VERSION="${QUARRY_PROMETHEUS_VERSION:-v0.316.0}"
PROMETHEUS_VERSION="${QUARRY_PROMETHEUS_RELEASE:-3.16.0}"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
GO_VERSION="$(go env GOVERSION)"
OUT="$CACHE_ROOT/bin/prometheus-$PROMETHEUS_MODULE_VERSION-$GO_VERSION"
mkdir -p "$OUT"
exec 9>"$CACHE_ROOT/build-prometheus.lock"
flock 9
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

if [ ! -x "$OUT/prometheus" ]; then
  echo "[build-prometheus] building prometheus $PROMETHEUS_VERSION (a few minutes on 2 cores)" >&2
  GOBIN="$OUT/.tmp" go install -trimpath \
    -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
    "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_MODULE_VERSION" >&2
  mv "$OUT/.tmp/prometheus" "$OUT/prometheus"
  rmdir "$OUT/.tmp"
fi
echo "$OUT"
