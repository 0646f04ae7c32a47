// Which parts of Quarry the all-in-one process runs: QUARRY_COMPONENTS, a
// comma list; unset or empty, all of them.

/** Every component, in the order the process wires them. */
export const COMPONENTS = ["lifecycle", "run", "cluster", "git", "bundle", "pipe", "http", "hub"] as const;
export type Component = (typeof COMPONENTS)[number];

/** The resolvers among the components: they share one controller (wireResolvers). */
export const RESOLVER_COMPONENTS: readonly Component[] = ["cluster", "git", "bundle", "pipe", "http", "hub"];

const isComponent = (name: string): name is Component => (COMPONENTS as readonly string[]).includes(name);

/**
 * The components QUARRY_COMPONENTS names, in wiring order, each once. An unknown name is refused:
 * a typo must not leave a source silently unserved.
 */
export function parseComponents(value: string | undefined): Component[] {
  const names = (value ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  if (names.length === 0) return [...COMPONENTS];
  const unknown = names.filter((n) => !isComponent(n));
  if (unknown.length > 0)
    throw new Error(`QUARRY_COMPONENTS: unknown ${unknown.join(", ")} (known: ${COMPONENTS.join(",")})`);
  return COMPONENTS.filter((c) => names.includes(c));
}
