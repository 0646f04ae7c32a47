// HubResolver: Tekton's `hub` resolver (Artifact Hub and Tekton Hub APIs) on
// top of the SDK's egress. As Tekton v1.15: the version param is read as a
// go-version constraint (an exact version is one), the hub's version list
// picks the highest match, and the resource is fetched from the hub that
// answered the list; the hubs are the per-request `url`, else the configured
// list in order (first success wins), else the Deployment's env. Every
// connection goes through egressFetch: checked resolved address, no
// cross-origin redirect, the operator's CAs and proxy; no credential is ever
// sent to a hub.
import { createHash } from "node:crypto";
import {
  configParser,
  EgressDispatchers,
  egressGet,
  forbidden,
  invalidParams,
  matchesUrlPrefix,
  metadataHostProblem,
  notFound,
  type Params,
  ResolutionError,
  type ResolveContext,
  type Resolved,
  type Resolver,
  type ResolverConfig,
} from "@quarry/resolver-sdk";
import {
  CONFIG_MAP_NAME,
  configuredHubUrls,
  type HubConfig,
  type HubEnv,
  hubConfigKeys,
  KEYS,
  parseHubConfig,
} from "./config.ts";
import { validateParams } from "./generated/params-validator.js";
import {
  HUB_NAMES,
  type HubResource,
  type ListedVersion,
  listedVersions,
  manifestOf,
  resourceUrl,
  versionsUrl,
} from "./hub-api.ts";
import {
  type HubRequest,
  hubVersion,
  paramsSchema,
  parseRequest,
  URL_PARAM,
  VERSION_PARAM,
} from "./params.ts";
import { highestMatch, versionString } from "./version-constraint.ts";

/** How many of a hub's versions a "no version matches" message lists. */
const LISTED_IN_MESSAGE = 20;

/** A failure that ends the fallback over hub URLs: the hub answered, and the answer is no. */
class FinalAnswer extends Error {
  readonly error: ResolutionError;
  constructor(error: ResolutionError) {
    super(error.message);
    this.error = error;
  }
}

export class HubResolver implements Resolver {
  readonly type = "hub";
  readonly paramsSchema = paramsSchema;
  readonly compiledParams = validateParams;
  readonly configKeys = hubConfigKeys;
  private readonly config = configParser(parseHubConfig);
  // connections pooled per egress setting across requests
  private readonly dispatchers = new EgressDispatchers();
  private readonly env: HubEnv;

  constructor(env: HubEnv) {
    this.env = env;
  }

  /** A bad key fails the config load (ConfigError naming it); the last good config stays. */
  validateConfig(config: ResolverConfig): void {
    this.config(config);
  }

  async resolve(params: Params, ctx: ResolveContext): Promise<Resolved> {
    const config = this.config(ctx.config);
    const req = parseRequest(params, config);
    const bases =
      req.url === undefined
        ? configuredHubUrls(req.type, config, this.env)
        : [this.checkUrlParam(req.url, config)];
    if (bases.length === 0)
      throw invalidParams(
        `no ${HUB_NAMES[req.type]} URL is configured for type ${req.type}: set ${req.type === "tekton" ? KEYS.tektonHubUrls : KEYS.artifactHubUrls} in ${CONFIG_MAP_NAME} or ${req.type === "tekton" ? "TEKTON_HUB_API" : "ARTIFACT_HUB_API"} on the Deployment, or give param "${URL_PARAM}"`,
      );
    const hub = new HubClient(req, config, ctx, this.dispatchers);
    // the hub that lists a matching version serves it too: later hubs are not asked
    const { base, version } = await hub.firstOf(bases, async (b) => ({
      base: b,
      version: await hub.pick(b),
    }));
    const url = resourceUrl(base, req, hubVersion(version, req.type));
    const yaml = await hub.manifest(url, base);
    const data = new TextEncoder().encode(yaml);
    return {
      data,
      refSource: { uri: url, digest: { sha256: createHash("sha256").update(data).digest("hex") } },
    };
  }

  /** The per-request hub: refused when allowed-hub-urls does not cover it; metadata hosts never. */
  private checkUrlParam(url: string, config: HubConfig): string {
    const allowed = config.allowedUrls;
    if (allowed !== undefined && !allowed.some((prefix) => matchesUrlPrefix(prefix, `${url}/`)))
      throw forbidden(
        allowed.length === 0
          ? `param "${URL_PARAM}" is not accepted: ${KEYS.allowedUrls} in ${CONFIG_MAP_NAME} is empty`
          : `param "${URL_PARAM}": ${url} is under none of ${KEYS.allowedUrls} in ${CONFIG_MAP_NAME} (${allowed.join(", ")})`,
      );
    return url;
  }
}

/** One request's calls to the hubs. */
class HubClient {
  private readonly req: HubRequest;
  private readonly config: HubConfig;
  private readonly ctx: ResolveContext;
  private readonly dispatchers: EgressDispatchers;

  constructor(req: HubRequest, config: HubConfig, ctx: ResolveContext, dispatchers: EgressDispatchers) {
    this.req = req;
    this.config = config;
    this.ctx = ctx;
    this.dispatchers = dispatchers;
  }

  /** Where a message says a hub is: `param "url": …` for the request's own hub. */
  private at(base: string): string {
    const hub = `${HUB_NAMES[this.req.type]} ${base}`;
    return this.req.url === undefined ? hub : `param "${URL_PARAM}": ${hub}`;
  }

  /**
   * The first hub whose `attempt` succeeds, in order (Tekton's fallback). A FinalAnswer ends the
   * search. When every hub failed: one hub's own error; else all of them in one message, transient
   * (retried) when any was.
   */
  async firstOf<T>(bases: readonly string[], attempt: (base: string) => Promise<T>): Promise<T> {
    const failures: { base: string; err: unknown }[] = [];
    for (const base of bases) {
      try {
        return await attempt(base);
      } catch (err) {
        if (err instanceof FinalAnswer) throw err.error;
        if (this.ctx.signal.aborted) throw err;
        this.ctx.log.info({ hub: base, err: (err as Error).message }, "hub did not serve; trying the next");
        failures.push({ base, err });
      }
    }
    if (failures.length === 1) throw failures[0]?.err;
    const message = `no configured ${HUB_NAMES[this.req.type]} URL served ${this.req.name}: ${failures
      .map((f) => (f.err as Error).message)
      .join("; ")}`;
    const reasons = new Set(
      failures.map((f) => (f.err instanceof ResolutionError ? f.err.reason : "transient")),
    );
    if (reasons.has("transient")) throw new Error(message);
    const [only] = reasons;
    throw new ResolutionError(
      reasons.size === 1 && only !== undefined && only !== "transient" ? only : "SourceUnavailable",
      message,
    );
  }

  /** The version to fetch: the highest the hub lists that satisfies the constraint. */
  async pick(base: string): Promise<string> {
    const url = versionsUrl(base, this.req);
    const listing = listedVersions(this.req.type, await this.json(url, base));
    if ("error" in listing)
      throw new ResolutionError("SourceUnavailable", `${this.at(base)}: ${url}: ${listing.error}`);
    const { versions, skipped } = listing.ok;
    if (skipped.length > 0)
      this.ctx.log.warn({ url, skipped }, "hub listed entries that are no versions; skipped");
    const best = highestMatch(versions, this.req.constraint);
    if (!best) throw new FinalAnswer(notFound(this.noMatch(base, versions)));
    return versionString(best.version);
  }

  private noMatch(base: string, versions: readonly ListedVersion[]): string {
    const r: HubResource = this.req;
    const shown = versions.slice(-LISTED_IN_MESSAGE).map((v) => v.text);
    const listed =
      versions.length === 0
        ? "it lists no versions"
        : `it lists ${versions.length > LISTED_IN_MESSAGE ? `${versions.length}, the last ${LISTED_IN_MESSAGE}: ` : ""}${shown.join(", ")}`;
    return `param "${VERSION_PARAM}": no version of ${r.kind} ${r.name} in catalog ${r.catalog} on ${HUB_NAMES[r.type]} ${base} matches ${JSON.stringify(this.req.version)} (${listed})`;
  }

  /** The resource's YAML at `url`. */
  async manifest(url: string, base: string): Promise<string> {
    const yaml = manifestOf(this.req.type, await this.json(url, base));
    if ("error" in yaml)
      throw new ResolutionError("SourceUnavailable", `${this.at(base)}: ${url}: ${yaml.error}`);
    return yaml.ok;
  }

  /** GET `url` as JSON: terminal ResolutionError, or a plain Error the runtime retries. */
  private async json(url: string, base: string): Promise<unknown> {
    const target = new URL(url);
    const at = `${this.at(base)}: ${url}`;
    // a metadata service's name fails before any DNS lookup
    const problem = metadataHostProblem(target.hostname);
    if (problem) throw forbidden(`${this.at(base)}: ${problem}`);
    const body = await egressGet(target, {
      egress: () => this.config.egress,
      dispatchers: this.dispatchers,
      signal: this.ctx.signal,
      headers: { accept: "application/json" },
      at,
      refusedAt: this.at(base),
    });
    try {
      return JSON.parse(new TextDecoder().decode(body));
    } catch {
      throw new ResolutionError("SourceUnavailable", `${at} answered with a body that is not JSON`);
    }
  }
}
