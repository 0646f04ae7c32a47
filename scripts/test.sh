#!/usr/bin/env bash
# Every test: lint and format, types, generated CRDs up to date, unit tests,
# then e2e against a real kube-apiserver, then the demo end to end. Installs
# whatever is missing first.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
quarry_setup
cd "$QUARRY_ROOT"
start=$(date +%s)
echo "== lint and format"; pnpm lint
echo "== typecheck"; pnpm typecheck
echo "== generated manifests"; node libs/api/src/gen-crds.ts --check
echo "== generated validators (ajv standalone)"; node scripts/gen-validators.ts --check
echo "== rendered deploy/ (charts)"; bash scripts/render-deploy.sh --check
echo "== charts: helm lint and template tests"; pnpm test:charts
echo "== unit tests"; pnpm test:unit
# every scenario file in the fleet mode, and e2e/modes.ts's CI set (a few minutes more, in the same
# run) again with the services as components of one all-in-one process
echo "== e2e (real kube-apiserver; fleet and all-in-one modes)"; pnpm test:e2e
# e2e/modes.ts's CI_AS_IMAGE set again, each service run from its image's tree (bundled), as pods run it
echo "== e2e from the image trees (type-stripped, bundled)"; pnpm test:e2e:image
echo "== in-cluster e2e (helm installs Quarry as pods on the real node, fleet and all-in-one)"; pnpm test:e2e:cluster
# after the e2e runner's node is gone: the demo starts its own (one node per machine)
echo "== demo (its own control plane and node)"; pnpm test:demo
# images/Dockerfile itself (the e2e runs the layout build of the same tree): the git resolver's
# image, whose build has every stage (pnpm deploy, apt's git), built with buildah and run with
# runc (user, read-only root, /healthz, exit 0 on SIGTERM); about 2 min with the base cached,
# 5 min more the first time (docs/performance.md, "Images")
echo "== images/Dockerfile: build and run the git resolver's image"; bash scripts/build-dockerfile-images.sh git-resolver
echo "all tests passed in $(( $(date +%s) - start ))s"
