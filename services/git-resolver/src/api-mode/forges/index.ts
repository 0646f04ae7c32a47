// The forge clients by scmType.
import type { ScmType } from "../params.ts";
import type { ForgeKind } from "./forge.ts";
import { gitea } from "./gitea.ts";
import { github } from "./github.ts";
import { gitlab } from "./gitlab.ts";

export const FORGES: Readonly<Record<ScmType, ForgeKind>> = { github, gitlab, gitea };
