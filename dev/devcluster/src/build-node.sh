#!/usr/bin/env bash
# What the e2e test node (node.ts) needs besides the control plane: Debian's
# containerd 1.6, runc, containernetworking-plugins (the pod network's bridge and
# host-local IPAM), iproute2, busybox-static and openssl (installed with apt-get
# when missing; gcc and libc6-dev build the pause image), and kubelet,
# kube-controller-manager and kube-scheduler built by build-binaries.sh from the
# same wrapper module as kube-apiserver, into the same versioned cache directory.
# Prints that directory on its last line of stdout.
#
# quarry_setup (scripts/env.sh) starts this in the background; node.ts runs it
# again before starting a node and waits here (flock) for a build under way.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${QUARRY_CACHE:-$HOME/.cache/quarry}"
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/build-node.lock"
flock 9

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
missing=()
for pkg in containerd runc containernetworking-plugins iproute2 busybox-static openssl gcc libc6-dev; do
  installed "$pkg" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[build-node] installing ${missing[*]} with apt-get" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# kubectl: the release e2e applies release.yaml with it, as an operator does
QUARRY_K8S_BINARIES="kubelet kube-controller-manager kube-scheduler kubectl" exec bash "$here/build-binaries.sh"
