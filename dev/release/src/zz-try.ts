import { startRegistry } from "@quarry/devcluster/registry";
import { release } from "./release.ts";
const reg = await startRegistry();
try {
  const rel = await release({ registry: reg.host, version: "0.1.0", out: "/tmp/q/rel-out", plainHttp: true }, (l) => console.log(l));
  console.log(JSON.stringify(rel.charts.map((c) => c.ref)));
} finally {
  await reg.stop();
}
