// The http resolver's e2e world: the lifecycle controller and the http
// resolver as real processes under their shipped RBAC, and a programmable
// HTTP(S) server on loopback (http-server.ts) whose requests, Authorization
// headers included, the tests read.
import { after, before } from "node:test";
import type { ResolutionRequest } from "@quarry/api";
import { applyObject } from "@quarry/devcluster/apply";
import { grantOptInRules } from "@quarry/devcluster/opt-in-rbac";
import { type HttpFixture, type HttpFixtureOptions, startHttpFixture } from "./http-server.ts";
import {
  createRequest,
  finished,
  newRequest,
  type Scenario,
  setConfig,
  useScenario,
  waitForRequest,
} from "./scenario.ts";

export const HTTP_LABELS = { "resolution.tekton.dev/type": "http" };

export interface HttpWorld {
  scn: Scenario;
  web: HttpFixture;
}

export interface HttpScenarioOptions {
  /** The fixture server's options (TLS). */
  server?: HttpFixtureOptions;
  /** http-resolver-config, written before the resolver starts; a function sees the server. */
  config?: (web: HttpFixture) => Record<string, string>;
  /** Runs after the namespace and the server exist, before the services start. */
  setup?: (world: HttpWorld) => Promise<void>;
}

export function useHttpScenario(prefix: string, opts: HttpScenarioOptions = {}): () => HttpWorld {
  let web: HttpFixture | undefined;
  before(async () => {
    web = await startHttpFixture(opts.server);
  });
  after(() => web?.close());
  const scenario = useScenario(prefix, {
    start: ["lifecycle-controller", "http-resolver"],
    setup: async (scn) => {
      if (!web) throw new Error("the http fixture did not start");
      if (opts.config) await setConfig(scn, "http-resolver-config", opts.config(web));
      await opts.setup?.({ scn, web });
    },
  });
  return () => {
    if (!web) throw new Error("the http fixture did not start");
    return { scn: scenario(), web };
  };
}

/** Creates an http request with `params` and waits for it to finish either way. */
export async function httpOutcome(
  scn: Scenario,
  name: string,
  params: Record<string, string>,
): Promise<ResolutionRequest> {
  await createRequest(scn.admin, newRequest(scn.namespace, name, HTTP_LABELS, params));
  return waitForRequest(scn, name, finished);
}

/** The namespace opts in: the http resolver may read its Secrets (ClusterRole quarry-http-resolver-credentials). */
export function grantCredentialAccess(scn: Scenario): Promise<void> {
  return grantOptInRules(scn, {
    service: "http-resolver",
    rulesKey: "credentialRules",
    role: "quarry-http-resolver-credentials",
  });
}

/** A password Secret in the scenario's namespace, bound to `boundTo` (quarry.dev/credential-urls) when given. */
export async function createPasswordSecret(
  scn: Scenario,
  name: string,
  data: Record<string, string>,
  boundTo: string[] = [],
): Promise<void> {
  const annotations: Record<string, string> =
    boundTo.length > 0 ? { "quarry.dev/credential-urls": boundTo.join(",") } : {};
  await applyObject(scn.admin, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: scn.namespace, annotations },
    stringData: data,
  });
}
