// A key of a resolver's ConfigMap that no one reads is never silently
// ignored: one Warning Event on the ConfigMap and one warn log line name it,
// once per change of the ConfigMap's data (not on a relist or a
// metadata-only update), and again after the data changes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@quarry/devcluster/wait";
import { setConfig, useScenario } from "@quarry/harness/scenario";
import { configMaps } from "@quarry/kube";

const CM = "cluster-resolver-config";
const scenario = useScenario("cfg-unknown", { start: ["cluster-resolver"] });

interface EventItem {
  type: string;
  reason: string;
  message: string;
  count?: number;
  involvedObject: { kind: string; name: string };
}

async function warnings(): Promise<EventItem[]> {
  const scn = scenario();
  const list = await scn.admin.request<{ items: EventItem[] }>(
    "GET",
    `/api/v1/namespaces/${scn.namespace}/events`,
  );
  return list.items.filter((e) => e.reason === "UnknownConfigKey" && e.involvedObject.name === CM);
}

const reported = async () => (await warnings()).reduce((n, e) => n + (e.count ?? 1), 0);

function logLines(): Record<string, unknown>[] {
  return scenario()
    .services[0]!.logs()
    .split("\n")
    .filter((l) => l.includes("UnknownConfigKey"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function settle(): Promise<void> {
  // long enough for a second report to arrive if one were sent
  await new Promise((r) => setTimeout(r, 2000));
}

test("a typo'd key is reported once, naming the key and the ConfigMap", async () => {
  const scn = scenario();
  await setConfig(scn, CM, { "allowed-namespace": "team-a", "default-kind": "task" });
  const [event] = await waitUntil("UnknownConfigKey event", async () => {
    const found = await warnings();
    return found.length > 0 && found;
  });
  assert.equal(event?.type, "Warning");
  assert.equal(event?.involvedObject.kind, "ConfigMap");
  assert.match(
    event?.message ?? "",
    new RegExp(`ConfigMap ${scn.namespace}/${CM} .*key "allowed-namespace"`),
  );
  // a metadata-only update is not a change of the data
  await scn.admin.mergePatch(configMaps, scn.namespace, CM, { metadata: { labels: { touched: "yes" } } });
  await settle();
  assert.equal(await reported(), 1);
  const lines = logLines();
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.level, "warn");
  assert.equal(lines[0]?.key, "allowed-namespace");
  assert.equal(lines[0]?.configMap, CM);
});

test("a change of the data reports it again, once", async () => {
  const scn = scenario();
  await setConfig(scn, CM, { "allowed-namespace": "team-a,team-b", "default-kind": "task" });
  await waitUntil("a second UnknownConfigKey event", async () => (await reported()) === 2);
  await settle();
  assert.equal(await reported(), 2);
  assert.equal(logLines().length, 2);
});
