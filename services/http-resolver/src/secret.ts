// An http password is read by the SDK's credential reader: one GET of one
// Secret in the request's own namespace, its annotations binding it to URLs.
import type { KubeClient } from "@quarry/kube";
import { type CredentialReader, kubeCredentialReader } from "@quarry/resolver-sdk";

export type {
  CredentialProblem as PasswordProblem,
  CredentialReader as PasswordReader,
  CredentialSecret as PasswordSecret,
} from "@quarry/resolver-sdk";

/** As Tekton: the password's bytes as stored, not trimmed. */
export const kubePasswordReader = (client: KubeClient): CredentialReader =>
  kubeCredentialReader(client, {
    reader: "the http resolver",
    optInRole: "quarry-http-resolver-credentials",
    trim: false,
  });

/** What a request learns when its password Secret cannot be used, whatever the reason (names only). */
export function unusablePasswordMessage(
  namespace: string,
  name: string,
  key: string,
  origin: string,
): string {
  return `param "http-password-secret": Secret ${namespace}/${name} key ${JSON.stringify(key)} cannot be used as an http password for ${origin}: it is missing, empty or unreadable by the http resolver, or not bound to this URL (the resolver's log says which)`;
}
