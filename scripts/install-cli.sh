#!/usr/bin/env bash
# Builds the `quarry` command as one JavaScript file (cli/src/build-bundle.ts:
# every dependency inside, plain JavaScript for Node >= 20) and installs it as
# ${QUARRY_BIN_DIR:-${PREFIX:-~/.local}/bin}/quarry. The installed file needs
# no checkout: copy it to any machine with Node >= 20 on PATH.
#   scripts/install-cli.sh                  # ~/.local/bin/quarry
#   PREFIX=/usr/local scripts/install-cli.sh
#   scripts/install-cli.sh --bundle-only    # just build cli/dist/quarry.mjs and print its path
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
quarry_ensure_node # the build runs on the repository's Node; the result does not need it
if [ ! -d "$root/node_modules" ]; then
  (cd "$root" && pnpm install --frozen-lockfile --reporter=silent >&2)
fi
bundle="$(node "$root/cli/src/build-bundle.ts" "$root/cli/dist/quarry.mjs")"
if [ "${1:-}" = "--bundle-only" ]; then
  echo "$bundle"
  exit 0
fi
dir="${QUARRY_BIN_DIR:-${PREFIX:-$HOME/.local}/bin}"
mkdir -p "$dir"
rm -f "$dir/quarry" # an older install may be a symlink into a checkout
install -m 0755 "$bundle" "$dir/quarry"
echo "installed $dir/quarry ($("$dir/quarry" --version))"
case ":$PATH:" in
  *":$dir:"*) ;;
  *) echo "add $dir to PATH, e.g.: export PATH=\"$dir:\$PATH\"" ;;
esac
