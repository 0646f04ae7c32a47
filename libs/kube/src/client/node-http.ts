// node:http, loaded with require(). An ESM import of node:http builds a namespace of every
// export, and reading its WebSocket, CloseEvent and MessageEvent getters loads Node's bundled
// undici: ~13 MiB of RSS in every process that imports it, for classes Quarry never uses.
// Types still come from `import type ... from "node:http"`, which loads nothing.
import { createRequire } from "node:module";

export const nodeHttp = createRequire(import.meta.url)("node:http") as typeof import("node:http");
