// LiveConfig over the fake client's list/watch: one ConfigMap, or the own one
// with others read in place over it (Tekton's, where Tekton keeps them).
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { createLogger } from "@quarry/observability";
import { configMaps } from "../client/resources.ts";
import { FakeKubeClient } from "../testing/fake-client.ts";
import { FakeEventRecorder } from "../testing/fake-recorder.ts";
import { ConfigError, type ConfigWarning, LiveConfig, type LiveConfigOptions } from "./config.ts";

const log = createLogger({ service: "test", level: process.env.TEST_LOG ?? "silent" });
const OWN = { namespace: "quarry-system", name: "git-resolver-config" };
const TEKTON = { namespace: "tekton-pipelines-resolvers", name: "git-resolver-config" };

type Data = Record<string, string>;
const cm = (ref: { namespace: string; name: string }, data: Data) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { ...ref },
  data,
});

/** The data as parsed; a key "bad" is refused, naming it. */
function parse(data: Data): Data {
  if (data.bad !== undefined) throw new ConfigError("bad", `not a value: "${data.bad}"`);
  return { ...data };
}

/** Warns about every key "typo". */
const warnings = (data: Readonly<Data>): ConfigWarning[] =>
  data.typo === undefined
    ? []
    : [{ key: "typo", reason: "UnknownConfigKey", message: 'key "typo" is not read' }];

const running: LiveConfig<Data>[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await Promise.all(c.informers.map((i) => i.stop()));
});

async function live(client: FakeKubeClient, opts: Partial<LiveConfigOptions<Data>> = {}) {
  const recorder = new FakeEventRecorder();
  const config = new LiveConfig<Data>({
    client,
    ...OWN,
    defaults: { default: "yes" },
    parse,
    warnings,
    log,
    recorder,
    ...opts,
  });
  running.push(config);
  for (const i of config.informers) i.start();
  await Promise.all(config.informers.map((i) => i.waitForSync()));
  await settle();
  return { config, recorder };
}

/** Lets watch events reach the informers. */
const settle = () => new Promise((r) => setTimeout(r, 20));

test("one ConfigMap: loaded, replaced on change, the defaults once it is deleted", async () => {
  const client = new FakeKubeClient();
  client.seed(configMaps, cm(OWN, { a: "1" }));
  const { config } = await live(client);
  assert.deepEqual(config.current(), { a: "1" });
  client.seed(configMaps, cm(OWN, { a: "2" }));
  await settle();
  assert.deepEqual(config.current(), { a: "2" });
  await client.delete(configMaps, OWN.namespace, OWN.name);
  await settle();
  assert.deepEqual(config.current(), { default: "yes" });
});

test("a ConfigMap read in place wins key by key; the own one's other keys stay", async () => {
  const client = new FakeKubeClient();
  client.seed(
    configMaps,
    cm(OWN, { a: "own", "ca-bundle": "pem" }),
    cm(TEKTON, { a: "tekton", b: "tekton" }),
  );
  const { config } = await live(client, { overlays: [TEKTON] });
  assert.deepEqual(config.current(), { a: "tekton", b: "tekton", "ca-bundle": "pem" });
  // editing Tekton's ConfigMap in place is seen live
  client.seed(configMaps, cm(TEKTON, { a: "tekton-2" }));
  await settle();
  assert.deepEqual(config.current(), { a: "tekton-2", "ca-bundle": "pem" });
  // without it, the own ConfigMap alone
  await client.delete(configMaps, TEKTON.namespace, TEKTON.name);
  await settle();
  assert.deepEqual(config.current(), { a: "own", "ca-bundle": "pem" });
});

test("only the ConfigMap read in place, the own one missing: its keys alone; neither: the defaults", async () => {
  const client = new FakeKubeClient();
  client.seed(configMaps, cm(TEKTON, { b: "tekton" }));
  const { config } = await live(client, { overlays: [TEKTON] });
  assert.deepEqual(config.current(), { b: "tekton" });
  await client.delete(configMaps, TEKTON.namespace, TEKTON.name);
  await settle();
  assert.deepEqual(config.current(), { default: "yes" });
});

test("a bad key keeps the last good config; the Warning is raised on the ConfigMap the key came from", async () => {
  const client = new FakeKubeClient();
  client.seed(configMaps, cm(OWN, { a: "own" }), cm(TEKTON, { b: "tekton" }));
  const { config, recorder } = await live(client, { overlays: [TEKTON] });
  client.seed(configMaps, cm(TEKTON, { b: "tekton", bad: "x" }));
  await settle();
  assert.deepEqual(config.current(), { a: "own", b: "tekton" });
  assert.deepEqual(
    recorder.events.map((e) => [e.object, e.reason]),
    [["tekton-pipelines-resolvers/git-resolver-config", "InvalidConfig"]],
  );
  assert.match(
    recorder.events[0]!.message,
    /^invalid config in ConfigMap quarry-system\/git-resolver-config \(key read from ConfigMap tekton-pipelines-resolvers\/git-resolver-config\), keeping the last good config: bad: not a value: "x"$/,
  );
});

test("an invalid config at start is reported once, after every ConfigMap was read", async () => {
  const client = new FakeKubeClient();
  client.seed(configMaps, cm(OWN, { bad: "x" }), cm(TEKTON, { b: "tekton" }));
  const { config, recorder } = await live(client, { overlays: [TEKTON] });
  assert.deepEqual(config.current(), { default: "yes" });
  assert.deepEqual(
    recorder.events.map((e) => [e.object, e.reason]),
    [["quarry-system/git-resolver-config", "InvalidConfig"]],
  );
});

test("warnings are per ConfigMap, raised on it, once per change of its data", async () => {
  const client = new FakeKubeClient();
  client.seed(configMaps, cm(OWN, { typo: "1" }), cm(TEKTON, { typo: "1" }));
  const { recorder } = await live(client, { overlays: [TEKTON] });
  const raised = () => recorder.events.filter((e) => e.reason === "UnknownConfigKey").map((e) => e.object);
  assert.deepEqual(raised().sort(), [
    "quarry-system/git-resolver-config",
    "tekton-pipelines-resolvers/git-resolver-config",
  ]);
  // a metadata-only change of Tekton's is not a change of its data
  client.seed(configMaps, { ...cm(TEKTON, { typo: "1" }), metadata: { ...TEKTON, labels: { x: "y" } } });
  await settle();
  assert.equal(raised().length, 2);
  client.seed(configMaps, cm(TEKTON, { typo: "2" }));
  await settle();
  assert.deepEqual(raised().at(-1), "tekton-pipelines-resolvers/git-resolver-config");
  assert.equal(raised().length, 3);
});
