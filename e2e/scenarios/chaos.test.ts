// The chaos suite's CI form: 220 requests and runs under every fault, shorter
// outages (e2e/chaos/suite.ts). QUARRY_CHAOS_FULL=1 runs 1,350 with the full
// outages (30 s git and registry, 10 s etcd frozen) and, on a real node of the
// suite's own control plane, the pipe resolver and pipe requests: `pnpm test:chaos`.
import { chaosSuite } from "../chaos/suite.ts";

chaosSuite(process.env.QUARRY_CHAOS_FULL === "1");
