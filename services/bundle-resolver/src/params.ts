// The bundle resolver's params (Tekton's names) and their checks. Pure: every
// refusal names the param at fault.
import { type ImageReference, InvalidReferenceError, parseReference } from "@quarry/oci";
import { invalidParams, type Params, type ParamsSchema } from "@quarry/resolver-sdk";
import type { BundleConfig } from "./config.ts";

/** Capped, so a hostile megabyte-long param is refused at once rather than carried into registry calls. */
const nonEmpty = (maxLength: number) => ({ type: "string", minLength: 1, maxLength }) as const;
const capped = (maxLength: number) => ({ type: "string", maxLength }) as const;

export const paramsSchema: ParamsSchema = {
  type: "object",
  properties: {
    bundle: nonEmpty(4096),
    name: nonEmpty(253),
    kind: capped(63),
    secret: capped(253),
    serviceAccount: capped(253),
  },
  required: ["bundle", "name"],
  additionalProperties: false,
};

export interface BundleRequest {
  ref: ImageReference;
  /** The reference as written, for messages. */
  bundle: string;
  name: string;
  /** Lower-cased: layer kinds are matched case-insensitively. */
  kind: string;
  /** An image pull Secret in the request's namespace. */
  secret: string | undefined;
  /** A ServiceAccount in the request's namespace whose imagePullSecrets are used. */
  serviceAccount: string | undefined;
}

const DNS_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function str(params: Params, name: string): string | undefined {
  const v = params[name];
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

export function parseRequest(params: Params, config: BundleConfig): BundleRequest {
  const bundle = str(params, "bundle");
  if (!bundle) throw invalidParams('param "bundle" is required');
  // user:password@registry/...: refused without echoing the reference, which would put the
  // password in the request's status, its Event and the log
  if (/@/.test(bundle.split("/")[0] ?? "")) {
    throw invalidParams(
      'param "bundle": must not contain credentials; name a pull Secret in "secret" or a ServiceAccount in "serviceAccount"',
    );
  }
  let ref: ImageReference;
  try {
    ref = parseReference(bundle);
  } catch (err) {
    if (err instanceof InvalidReferenceError) throw invalidParams(`param "bundle": ${err.message}`);
    throw err;
  }
  const name = str(params, "name");
  if (!name) throw invalidParams('param "name" is required');
  const kind = (str(params, "kind") ?? config.defaultKind).toLowerCase();
  const secret = str(params, "secret");
  const serviceAccount = str(params, "serviceAccount");
  for (const [param, value] of [
    ["secret", secret],
    ["serviceAccount", serviceAccount],
  ] as const) {
    if (value !== undefined && (value.length > 253 || !DNS_NAME.test(value))) {
      throw invalidParams(`param "${param}": ${JSON.stringify(value)} is not a valid object name`);
    }
  }
  return { ref, bundle, name, kind, secret, serviceAccount };
}

/** An @sha256 reference pins the content: cacheable in "auto" mode. */
export function pinsContent(params: Params): boolean {
  const bundle = params.bundle;
  if (typeof bundle !== "string") return false;
  try {
    return parseReference(bundle).digest !== undefined;
  } catch {
    return false;
  }
}
