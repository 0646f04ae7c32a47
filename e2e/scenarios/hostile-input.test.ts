// The hostile-input suite's CI form: the rows of e2e/hostile/cases.ts marked
// `short` (a representative subset over every resolver and controller).
// QUARRY_HOSTILE_FULL=1 runs every row: `pnpm test:hostile`.
import { hostileSuite } from "../hostile/suite.ts";

hostileSuite(process.env.QUARRY_HOSTILE_FULL === "1");
