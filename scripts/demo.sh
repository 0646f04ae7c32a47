#!/usr/bin/env bash
# The demo: an embedded control plane with the Quarry fleet resolving real
# requests. Installs whatever is missing first. Pass --keep to poke at it.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
quarry_setup
cd "$QUARRY_ROOT"
exec node dev/demo/src/main.ts "$@"
