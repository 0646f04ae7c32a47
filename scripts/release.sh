#!/usr/bin/env bash
# Releases Quarry into a registry: every service's image (by digest, with a CycloneDX SBOM), every
# chart as an OCI chart under oci://REGISTRY/charts, release.yaml and release-with-tekton-crds.yaml,
# release.json and SHA256SUMS in dist/release/VERSION (dev/release). VERSION defaults to the
# repository's VERSION file.
# usage: scripts/release.sh REGISTRY [VERSION] [--out DIR] [--plain-http]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=env.sh
. "$root/scripts/env.sh"
quarry_ensure_node >/dev/null
exec node "$root/dev/release/src/main.ts" "$@"
