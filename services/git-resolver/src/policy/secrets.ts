// A gitToken is read by the SDK's credential reader: one GET of one Secret in
// the request's own namespace, its annotations binding it to URLs.

import type { KubeClient } from "@quarry/kube";
import { type CredentialReader, kubeCredentialReader } from "@quarry/resolver-sdk";

export type {
  CredentialProblem as TokenSecretProblem,
  CredentialReader as SecretReader,
  CredentialSecret as TokenSecret,
} from "@quarry/resolver-sdk";

export const kubeSecretReader = (client: KubeClient): CredentialReader =>
  kubeCredentialReader(client, {
    reader: "the git resolver",
    optInRole: "quarry-git-resolver-tokens",
    trim: true,
  });

/** What a request learns when its gitToken cannot be used, whatever the reason (names only). */
export function unusableTokenMessage(namespace: string, name: string, key: string, url: string): string {
  return `param "gitToken": Secret ${namespace}/${name} key ${JSON.stringify(key)} cannot be used as a git token for ${url}: it is missing, empty or unreadable by the git resolver, or not bound to this URL (the resolver's log says which)`;
}
