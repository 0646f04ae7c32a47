import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** The services with an entry point: services/<name>/src/main.ts (every image and Deployment). */
export function servicesWithMain(): string[] {
  const services = join(repoRoot, "services");
  return readdirSync(services).filter((s) => existsSync(join(services, s, "src", "main.ts")));
}
