#!/usr/bin/env bash
# Builds Tekton Pipelines' own controller (cmd/controller) and remote resolvers (cmd/resolvers)
# from the Go module proxy at a pinned version, and caches them by version and Go version like
# build-oci-tools.sh. The Tekton interop scenarios (e2e/scenarios/tekton-interop-*.test.ts) run
# the controller as a client of Quarry's resolvers; the side-by-side benchmark runs Tekton's
# resolvers against Quarry's. Both binaries come from one wrapper module in one go.
# Also copies the module's CRDs, config maps and RBAC (config/300-crds, config/config-*.yaml,
# config/20[01]-*.yaml) next to the binaries: Tekton's release YAML is not in the Go module, these
# files are its sources (dev/devcluster/src/tekton.ts installs them).
# Prints the output directory on its last line of stdout.
#
# Why v1.15.1: the proxy refuses v1.16.0's source. Why a wrapper module: `go install pkg@version`
# refuses a go.mod with replace directives, and the wrapper carries them over should a version
# have any (v1.15.1 has none).
set -euo pipefail

TEKTON_VERSION="${QUARRY_TEKTON_VERSION:-v1.15.1}"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
GO_VERSION="$(go env GOVERSION)"
OUT="$CACHE_ROOT/bin/tekton-pipelines-$TEKTON_VERSION-$GO_VERSION"
mkdir -p "$OUT"
# a test run and a background set-up at once must not build into the same temp files
exec 9>"$CACHE_ROOT/build-tekton.lock"
flock 9
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

log() { echo "[build-tekton] $*" >&2; }

dir="$CACHE_ROOT/wrappers/tekton-pipelines-$TEKTON_VERSION"
module_dir() { # the module's source in the Go module cache (downloaded if missing)
  mkdir -p "$dir"
  (cd "$dir" && go mod download -json "github.com/tektoncd/pipeline@$TEKTON_VERSION")
}

if [ ! -x "$OUT/controller" ] || [ ! -x "$OUT/resolvers" ]; then
  log "building Tekton Pipelines $TEKTON_VERSION controller and resolvers (wrapper in $dir; 10-20 min cold on 2 cores)"
  json="$(module_dir)"
  gomod="$(echo "$json" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  src="$(echo "$json" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')"
  {
    echo "module quarry.local/tekton-pipelines-wrapper"
    echo
    grep -E '^go ' "$gomod"
    echo
    echo "require github.com/tektoncd/pipeline $TEKTON_VERSION"
    # carry over Tekton's own replace directives (one-line and block form: module => module version)
    grep -E '^replace [^ ]+ => [^ ]+ v' "$gomod" || true
    sed -n '/^replace (/,/^)/p' "$gomod"
  } >"$dir/go.mod"
  # Tekton's own go.sum: the checksums of exactly the versions it pins, so the build asks the
  # checksum database only for what the wrapper adds
  cp "$src/go.sum" "$dir/go.sum"
  chmod u+w "$dir/go.sum"
  cat >"$dir/tools.go" <<'GO'
//go:build tools

// Package tools pins the two Tekton commands this wrapper builds.
package tools

import (
	_ "github.com/tektoncd/pipeline/cmd/controller"
	_ "github.com/tektoncd/pipeline/cmd/resolvers"
)
GO
  (cd "$dir" && go get "github.com/tektoncd/pipeline@$TEKTON_VERSION" >&2)
  for cmd in controller resolvers; do
    log "go build cmd/$cmd"
    (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$OUT/$cmd.tmp" "github.com/tektoncd/pipeline/cmd/$cmd" >&2)
    mv "$OUT/$cmd.tmp" "$OUT/$cmd"
  done
fi

# The release's manifests the tests install: CRDs, config maps, RBAC (namespace tekton-pipelines)
if [ ! -f "$OUT/config/.complete" ]; then
  src="$(module_dir | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')"
  rm -rf "$OUT/config.tmp"
  mkdir -p "$OUT/config.tmp"
  cp -r "$src/config/300-crds" "$OUT/config.tmp/300-crds"
  cp "$src"/config/config-*.yaml "$src"/config/200-*.yaml "$src"/config/201-*.yaml "$OUT/config.tmp/"
  chmod -R u+w "$OUT/config.tmp"
  touch "$OUT/config.tmp/.complete"
  rm -rf "$OUT/config"
  mv "$OUT/config.tmp" "$OUT/config"
fi
echo "$OUT"
