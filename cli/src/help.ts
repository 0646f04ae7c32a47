// The usage text; kept next to the commands so it changes with them.
export const USAGE = `quarry: look at Quarry's ResolutionRequests and Tekton's runs, ask a resolver for something,
check an installation

Usage:
  quarry get [requests|runs|customruns] [NAME...] [-n NAMESPACE | -A] [-l SELECTOR] [-o FORMAT] [-w]
                                        list ResolutionRequests (NAME, SUCCEEDED, REASON, RESOLVER, AGE), or
                                        Tekton Runs and CustomRuns (NAME, TYPE, KIND, SUCCEEDED, REASON, STARTTIME,
                                        COMPLETIONTIME, AGE); -w prints every change until Ctrl-C
  quarry describe NAME... [-n NAMESPACE] show a request: resolver, params, conditions, data, refSource, events
  quarry describe run|customrun NAME... [-n NAMESPACE] [--kind Run|CustomRun]
                                        show a custom-task run: target, ref, params, conditions, the reason chain
                                        down to its ResolutionRequest, results, retries, refSource, events
  quarry describe taskrun|pipelinerun NAME... [-n NAMESPACE]
                                        show one of Tekton's runs and, by owner references, the ResolutionRequests
                                        and child runs behind it, with the reason chain
  quarry resolve TYPE KEY=VALUE... [-n NAMESPACE] [--timeout 90s]
                                        create a ResolutionRequest for resolver TYPE (git, cluster, bundles, ...)
                                        with these params, wait for it, print the resolved YAML and its refSource
  quarry version [--client] [-o json|yaml]
                                        the client's version and the fleet's (its Deployments' version label)
  quarry doctor [--system-namespace NS] [-o json|yaml]
                                        check the installation: CRDs and admission policies, each resolver's
                                        replicas and buckets, Tekton's own resolvers, namespace opt-ins
                                        (exit 1 when a check fails)
  quarry completion bash|zsh|fish       a shell completion script (e.g. source <(quarry completion bash))
  quarry help                           this text

Options:
  -n, --namespace NAME    namespace (default: the kube context's, else "default")
  -A, --all-namespaces    get: list in every namespace
  -l, --selector SEL      get: only objects with these labels (e.g. resolution.tekton.dev/type=git)
  -o, --output FORMAT     get: wide, json, yaml or name; version and doctor: json or yaml
  -w, --watch             get: after the listing, print each change until interrupted
      --kind KIND         get runs, describe run: only this flavour, Run or CustomRun
      --timeout DURATION  resolve: how long to wait (90s, 1m, 1m30s; a bare number is seconds)
      --kubeconfig PATH   kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)
      --context NAME      kubeconfig context to use (default: the current context)
      --system-namespace NS
                          version, doctor: where the fleet runs (default: quarry-system)
      --client            version: do not ask the cluster
      --version           the client's version
  -h, --help              this text

Commands other than help, completion and --version talk to the cluster of the kube context. To watch
Quarry work on a throwaway cluster, run scripts/demo.sh from a checkout (it is not part of this command).
`;
