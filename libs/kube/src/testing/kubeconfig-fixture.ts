// Tests' kubeconfig files: one context "ctx" naming cluster "c" and user "u",
// written as JSON (a kubeconfig is YAML, and JSON is YAML).
import { writeFileSync } from "node:fs";

export function writeKubeconfig(
  file: string,
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  namespace?: string,
): string {
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "ctx",
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u", ...(namespace ? { namespace } : {}) } }],
      clusters: [{ name: "c", cluster }],
      users: [{ name: "u", user }],
    }),
  );
  return file;
}
