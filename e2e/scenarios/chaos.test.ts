// The chaos suite's CI form: ~125 requests under every fault, shorter outages
// (e2e/chaos/suite.ts). QUARRY_CHAOS_FULL=1 runs 1,000 requests with the full
// outages (30 s git and registry, 10 s etcd frozen): `pnpm test:chaos`.
import { chaosSuite } from "../chaos/suite.ts";

chaosSuite(process.env.QUARRY_CHAOS_FULL === "1");
