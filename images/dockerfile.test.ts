// The one Dockerfile names exactly the services that exist: a service added or renamed
// under services/ without updating images/Dockerfile fails here, since nothing builds it in CI.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dockerfile = readFileSync(join(root, "images", "Dockerfile"), "utf8");

test("the Dockerfile's service list is the services/ directories", () => {
  const line = /^# Services: (.+)$/m.exec(dockerfile)?.[1];
  assert.ok(line, "images/Dockerfile lacks its '# Services:' line");
  const listed = line.trim().split(/\s+/).sort();
  const present = readdirSync(join(root, "services"))
    .filter((d) => existsSync(join(root, "services", d, "src", "main.ts")))
    .sort();
  assert.deepEqual(listed, present);
});

test("every service directory is deployable as @quarry/<dir> with src/main.ts as the entrypoint", () => {
  assert.match(dockerfile, /ENTRYPOINT \["node", "src\/main\.js"\]/);
  for (const d of readdirSync(join(root, "services"))) {
    const pkg = JSON.parse(readFileSync(join(root, "services", d, "package.json"), "utf8")) as {
      name: string;
    };
    assert.equal(pkg.name, `@quarry/${d}`);
  }
});

test("no per-service Dockerfiles remain beside the shared one", () => {
  for (const d of readdirSync(join(root, "services")))
    assert.equal(existsSync(join(root, "services", d, "Dockerfile")), false, `services/${d}/Dockerfile`);
});
