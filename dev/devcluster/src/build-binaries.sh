#!/usr/bin/env bash
# Builds the test control plane's binaries (etcd, kube-apiserver) from the Go
# module proxy, through small wrapper modules, and caches them by version.
# Prints the directory that holds the binaries on its last line of stdout.
# QUARRY_K8S_BINARIES names other k8s.io/kubernetes commands to build into the
# same directory (build-node.sh: kubelet, kube-controller-manager, kube-scheduler).
# Builds sharing a wrapper module take turns (flock), so one can run in the
# background while another waits for it.
#
# Why wrapper modules: k8s.io/kubernetes and etcd's server module point their
# sibling modules at local paths with replace directives, which a dependent
# module ignores; `go install ...@version` therefore fails. A wrapper that
# requires the main module and pins every sibling to the matching version builds.
set -euo pipefail

K8S_VERSION="${QUARRY_K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${QUARRY_ETCD_VERSION:-v3.6.16}"
BINARIES="${QUARRY_K8S_BINARIES:-kube-apiserver}"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
GO_VERSION="$(go env GOVERSION)"
OUT="$CACHE_ROOT/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-$GO_VERSION"
mkdir -p "$OUT"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

log() { echo "[build-binaries] $*" >&2; }

# Holds an exclusive lock on $1.lock until the calling subshell exits.
lock() { exec 9>"$1.lock"; flock 9; }

build_etcd() (
  [ -x "$OUT/etcd" ] && return 0
  local dir="$CACHE_ROOT/wrappers/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  lock "$dir"
  [ -x "$OUT/etcd" ] && return 0 # built while we waited
  log "building etcd $ETCD_VERSION (wrapper in $dir)"
  local gomod
  gomod="$(cd "$dir" && go mod download -json "go.etcd.io/etcd/server/v3@$ETCD_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  {
    echo "module quarry.local/etcd-wrapper"
    echo
    echo "go 1.24"
    echo
    echo "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
    # every `go.etcd.io/etcd/X => ../...` replace names a sibling pinned to our version
    grep -E '^\s*go\.etcd\.io/etcd/[^ ]+ => \.\./' "$gomod" | awk '{print $1}' | sort -u |
      while read -r m; do echo "replace $m => $m $ETCD_VERSION"; done
  } >"$dir/go.mod"
  (cd "$dir" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2 &&
    go build -trimpath -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3 >&2)
  mv "$OUT/etcd.tmp" "$OUT/etcd"
)

build_k8s() (
  local dir="$CACHE_ROOT/wrappers/k8s-$K8S_VERSION" missing=()
  for b in $BINARIES; do [ -x "$OUT/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  mkdir -p "$dir"
  lock "$dir"
  missing=()
  for b in $BINARIES; do [ -x "$OUT/$b" ] || missing+=("$b"); done # some built while we waited
  [ ${#missing[@]} -eq 0 ] && return 0
  log "building ${missing[*]} $K8S_VERSION (wrapper in $dir)"
  local gomod staging
  gomod="$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  staging="v0.${K8S_VERSION#v1.}"
  {
    echo "module quarry.local/k8s-wrapper"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    grep -E '^\s*k8s\.io/[^ ]+ => \./staging/' "$gomod" | awk '{print $1}' | sort -u |
      while read -r m; do echo "replace $m => $m $staging"; done
  } >"$dir/go.mod"
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  local ld=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  for b in "${missing[@]}"; do
    (cd "$dir" && go get "k8s.io/kubernetes/cmd/$b@$K8S_VERSION" >&2 &&
      go build -trimpath -ldflags "-s -w $ld" -o "$OUT/$b.tmp" "k8s.io/kubernetes/cmd/$b" >&2)
    mv "$OUT/$b.tmp" "$OUT/$b"
  done
)

build_etcd
build_k8s
echo "$OUT"
