#!/usr/bin/env bash
# Builds a Gitea server (the forge the git resolver's API mode reads through `scmType: gitea`)
# from the Go module proxy at a pinned version, with SQLite (Gitea's default driver,
# modernc.org/sqlite, pure Go: no cgo, no build tags), and caches it by version and Go version
# like build-jaeger.sh. Copies the module's templates/, options/ and public/ next to the binary:
# Gitea reads them from its STATIC_ROOT_PATH when it is built without bindata, and the REST API
# needs its locales and templates. The frontend bundle is not in the module and is not built:
# the web UI is unstyled, the API is all tests use (dev/harness/src/gitea.ts starts it).
# Prints the output directory on its last line of stdout.
#
# Why a wrapper module: Gitea's go.mod carries replace directives, which `go install pkg@version`
# refuses. Why more replaces: since v1.27 Gitea's go.mod says `module gitea.dev`, and it requires
# its siblings gitea.dev/sdk and gitea.dev/actions-proto-go, but the proxy here serves only the
# code.gitea.io paths (same content, the old import paths). The wrapper requires gitea.dev and
# replaces each gitea.dev module by its code.gitea.io twin at the same version. The checksum
# database does not know every twin (code.gitea.io/sdk v1.1.0), so the script checks each twin's
# content against the checksum Gitea's own go.sum pins for the gitea.dev path and writes the
# twin's checksum to the wrapper's go.sum itself.
set -euo pipefail

GITEA_VERSION="${QUARRY_GITEA_VERSION:-v1.27.3}"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
GO_VERSION="$(go env GOVERSION)"
OUT="$CACHE_ROOT/bin/gitea-$GITEA_VERSION-$GO_VERSION"
LEGACY=code.gitea.io # where the proxy serves Gitea's modules
mkdir -p "$OUT"
# a test run and a background set-up at once must not build into one temp file
exec 9>"$CACHE_ROOT/build-gitea.lock"
flock 9
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

log() { echo "[build-gitea] $*" >&2; }

# The h1: checksum of a module's extracted source directory $1 as module path@version $2
# (golang.org/x/mod/sumdb/dirhash Hash1: sha256 over "<sha256 hex>  <path@version/file>" lines
# sorted by file name).
h1() {
  (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | while IFS= read -r f; do
    printf '%s  %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$2/$f"
  done) | sha256sum | cut -d' ' -f1 | xxd -r -p | base64
}

json_field() { sed -n "s/.*\"$1\": \"\(.*\)\",*/\1/p"; }

if [ ! -x "$OUT/gitea" ]; then
  dir="$CACHE_ROOT/wrappers/gitea-$GITEA_VERSION"
  mkdir -p "$dir"
  log "building gitea $GITEA_VERSION (wrapper in $dir; ~5 min cold on 2 cores)"
  json="$(cd "$dir" && go mod download -json "$LEGACY/gitea@$GITEA_VERSION")"
  gomod="$(echo "$json" | json_field GoMod)"
  src="$(echo "$json" | json_field Dir)"
  declared="$(awk '$1 == "module" { print $2; exit }' "$gomod")"
  # Gitea's own go.sum: the checksums of exactly the versions it pins, so the build asks the
  # checksum database only for what the wrapper adds
  rm -f "$dir/go.sum"
  cat "$src/go.sum" >"$dir/go.sum"
  siblings=()
  if [ "$declared" != "$LEGACY/gitea" ]; then
    # "gitea.dev/sdk v1.1.0" for each required module under the declared path
    mapfile -t siblings < <(awk -v p="$declared/" 'index($1, p) == 1 && $2 ~ /^v/ { print $1, $2 }' "$gomod" | sort -u)
    for s in "${siblings[@]}"; do
      read -r mod ver <<<"$s"
      twin="$LEGACY/${mod#"$declared/"}"
      twin_json="$(cd "$dir" && GONOSUMDB="$twin" go mod download -json "$twin@$ver")"
      twin_dir="$(echo "$twin_json" | json_field Dir)"
      want="$(awk -v m="$mod" -v v="$ver" '$1 == m && $2 == v { print $3 }' "$src/go.sum")"
      got="h1:$(h1 "$twin_dir" "$mod@$ver")"
      if [ "$got" != "$want" ]; then
        log "$twin@$ver differs from $mod@$ver as Gitea's go.sum pins it ($got, want $want)"
        exit 1
      fi
      echo "$twin $ver h1:$(h1 "$twin_dir" "$twin@$ver")" >>"$dir/go.sum"
      echo "$twin $ver/go.mod $(echo "$twin_json" | json_field GoModSum)" >>"$dir/go.sum"
    done
  fi
  {
    echo "module quarry.local/gitea-wrapper"
    echo
    echo "go 1.26"
    echo
    echo "require $declared $GITEA_VERSION"
    if [ "$declared" != "$LEGACY/gitea" ]; then
      echo "replace $declared => $LEGACY/gitea $GITEA_VERSION"
      for s in "${siblings[@]}"; do
        read -r mod ver <<<"$s"
        echo "replace $mod => $LEGACY/${mod#"$declared/"} $ver"
      done
    fi
    # carry over Gitea's own replace directives (module => module version)
    grep -E '^replace [^ ]+ => [^ ]+ v' "$gomod" || true
  } >"$dir/go.mod"
  twins="$(for s in "${siblings[@]}"; do read -r mod _ <<<"$s"; printf '%s,' "$LEGACY/${mod#"$declared/"}"; done)"
  (cd "$dir" && export GONOSUMDB="${twins%,}" &&
    go get "$declared@$GITEA_VERSION" >&2 &&
    go build -trimpath -ldflags "-s -w -X main.Version=${GITEA_VERSION#v}" -o "$OUT/gitea.tmp" "$declared" >&2)
  for d in templates options public; do
    rm -rf "${OUT:?}/$d"
    cp -r "$src/$d" "$OUT/$d"
    chmod -R u+w "$OUT/$d"
  done
  mv "$OUT/gitea.tmp" "$OUT/gitea"
fi
echo "$OUT"
