// The usage text; kept next to the commands so it changes with them.
export const USAGE = `quarry: look at Quarry's ResolutionRequests and custom-task runs, or ask a resolver for something

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
  quarry help                           this text

Options:
  -n, --namespace NAME    namespace (default: the kube context's, else "default")
  -A, --all-namespaces    get: list in every namespace
      --kind KIND         get runs, describe run: only this flavour, Run or CustomRun
      --kubeconfig PATH   kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)
  -h, --help              this text

get, describe and resolve talk to the cluster of the current kube context. To watch Quarry work on a
throwaway cluster, run scripts/demo.sh from a checkout (it is not part of this command).
Install the command for your user with scripts/install-cli.sh (it runs on its own Node >= 22).
`;
