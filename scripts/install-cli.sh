#!/usr/bin/env bash
# Installs the `quarry` command for this user: a symlink to bin/quarry in
# ${QUARRY_BIN_DIR:-~/.local/bin} (made if missing). The command keeps running
# from this checkout, on its own Node (>= 22) whatever the shell's node is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${QUARRY_BIN_DIR:-$HOME/.local/bin}"
mkdir -p "$dir"
ln -sf "$root/bin/quarry" "$dir/quarry"
"$dir/quarry" help >/dev/null
echo "installed $dir/quarry -> $root/bin/quarry"
case ":$PATH:" in
  *":$dir:"*) ;;
  *) echo "add $dir to PATH, e.g.: export PATH=\"$dir:\$PATH\"" ;;
esac
