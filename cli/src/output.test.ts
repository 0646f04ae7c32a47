import assert from "node:assert/strict";
import { test } from "node:test";
import { formatObjects, formatWatched, qualifiedName } from "./output.ts";

const rr = (name: string) => ({
  apiVersion: "resolution.tekton.dev/v1beta1",
  kind: "ResolutionRequest",
  metadata: { name },
});

test("-o name: kind.group/name, as kubectl prints it; core objects have no group", () => {
  assert.equal(
    formatObjects([rr("a"), rr("b")], "name", false),
    "resolutionrequest.resolution.tekton.dev/a\nresolutionrequest.resolution.tekton.dev/b\n",
  );
  assert.equal(
    qualifiedName({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }),
    "configmap/c",
  );
});

test("-o json|yaml: one named object alone, a listing as a v1 List", () => {
  assert.deepEqual(JSON.parse(formatObjects([rr("a")], "json", true)), rr("a"));
  assert.deepEqual(JSON.parse(formatObjects([rr("a")], "json", false)), {
    apiVersion: "v1",
    kind: "List",
    items: [rr("a")],
  });
  assert.equal(
    formatObjects([rr("a")], "yaml", true),
    "apiVersion: resolution.tekton.dev/v1beta1\nkind: ResolutionRequest\nmetadata:\n  name: a\n",
  );
});

test("-w: each event's object on its own; YAML documents separated", () => {
  assert.equal(formatWatched(rr("a"), "name"), "resolutionrequest.resolution.tekton.dev/a\n");
  assert.match(formatWatched(rr("a"), "yaml"), /^---\napiVersion: /);
});
