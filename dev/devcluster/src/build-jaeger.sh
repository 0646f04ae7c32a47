#!/usr/bin/env bash
# Builds Jaeger v2 (an OpenTelemetry Collector distribution: OTLP receiver, in-memory trace
# storage, the query API that returns one trace by id) from the Go module proxy at a pinned
# version and caches it by version and Go version, like build-oci-tools.sh. The tracing e2e
# scenarios (e2e/scenarios/traces-*.test.ts) export the services' spans to it and ask it for
# the trace (dev/devcluster/src/jaeger.ts). Its web UI's assets are not built: the API is all
# the tests read.
# Prints the directory holding `jaeger` on its last line of stdout.
#
# Why a wrapper module: Jaeger's go.mod carries a replace directive, which
# `go install pkg@version` refuses. Why v1.x: Jaeger tags each v2 release also as v1.x
# (v1.76.0 is Jaeger v2.13.0) because its go.mod has no /v2 suffix, so only the v1 tags are
# Go module versions.
set -euo pipefail

JAEGER_MODULE_VERSION="${QUARRY_JAEGER_VERSION:-v1.76.0}"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
GO_VERSION="$(go env GOVERSION)"
OUT="$CACHE_ROOT/bin/jaeger-$JAEGER_MODULE_VERSION-$GO_VERSION"
mkdir -p "$OUT"
# a test run and a background set-up at once must not build into one temp file
exec 9>"$CACHE_ROOT/build-jaeger.lock"
flock 9
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

if [ ! -x "$OUT/jaeger" ]; then
  dir="$CACHE_ROOT/wrappers/jaeger-$JAEGER_MODULE_VERSION"
  mkdir -p "$dir"
  echo "[build-jaeger] building jaeger $JAEGER_MODULE_VERSION (wrapper in $dir; minutes on 2 cores)" >&2
  json="$(cd "$dir" && go mod download -json "github.com/jaegertracing/jaeger@$JAEGER_MODULE_VERSION")"
  gomod="$(echo "$json" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  src="$(echo "$json" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')"
  {
    echo "module quarry.local/jaeger-wrapper"
    echo
    echo "go 1.24"
    echo
    echo "require github.com/jaegertracing/jaeger $JAEGER_MODULE_VERSION"
    # carry over Jaeger's own replace directives (module => module version)
    grep -E '^replace [^ ]+ => [^ ]+ v' "$gomod" || true
  } >"$dir/go.mod"
  # Jaeger's own go.sum: the checksums of exactly the versions it pins, so the build asks the
  # checksum database only for what the wrapper adds (the proxy here does not serve every lookup)
  cp "$src/go.sum" "$dir/go.sum"
  (cd "$dir" && go get "github.com/jaegertracing/jaeger@$JAEGER_MODULE_VERSION" >&2 &&
    go build -trimpath -ldflags "-s -w" -o "$OUT/jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger >&2)
  mv "$OUT/jaeger.tmp" "$OUT/jaeger"
fi
echo "$OUT"
