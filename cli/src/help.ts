// The usage text; kept next to the commands so it changes with them.
export const USAGE = `quarry: look at Quarry's ResolutionRequests and custom-task runs, or watch Quarry work on a throwaway cluster

Usage:
  quarry get [-n NAMESPACE | -A]        list ResolutionRequests (NAME, SUCCEEDED, REASON, RESOLVER, AGE)
  quarry get runs [-n NAMESPACE | -A] [--kind Run|CustomRun]
                                        list Tekton Runs (v1alpha1) and CustomRuns (v1beta1): NAME, TYPE, KIND,
                                        SUCCEEDED, REASON, STARTTIME, COMPLETIONTIME, AGE ("get customruns": CustomRuns only)
  quarry describe NAME... [-n NAMESPACE] show a request: resolver, params, conditions, data, refSource, events
  quarry describe run NAME... [-n NAMESPACE] [--kind Run|CustomRun]
                                        show a run (a CustomRun of that name, else a Run): target, ref, params,
                                        conditions, the reason chain down to its ResolutionRequest, results,
                                        retries, child references, refSource, events
  quarry resolve TYPE KEY=VALUE... [-n NAMESPACE] [--timeout 90s]
                                        create a ResolutionRequest for resolver TYPE (git, cluster, bundles, ...)
                                        with these params, wait for it, print the resolved YAML and its refSource
  quarry demo [--keep]                  start an embedded control plane, a real node, a git server, an OCI registry
                                        and the fleet (lifecycle controller, git, bundle, cluster and pipe
                                        resolvers, run-controller, Wait task); resolve Tasks from git, a bundle
                                        and the cluster, and their failures; run Wait runs and a Pipe run that
                                        makes a certificate into Secrets; print get/describe/resolve; tear down
  quarry help                           this text

Options:
  -n, --namespace NAME    namespace (default: the kube context's, else "default")
  -A, --all-namespaces    get: list in every namespace
      --kind KIND         get runs, describe run: only this flavour, Run or CustomRun
      --kubeconfig PATH   kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)
      --keep              demo: leave the cluster running and print how to reach it; Ctrl-C stops it
  -h, --help              this text

get and describe talk to the cluster of the current kube context. The demo needs the binaries
scripts/demo.sh builds or installs once (control plane, test node, registry and tkn; then cached).
Install the command for your user with scripts/install-cli.sh (it runs on its own Node >= 22).
`;
