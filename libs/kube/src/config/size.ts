// Sizes in config keys, written like Kubernetes quantities (512Mi, 2Gi).

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** Kubernetes quantity style sizes: 512Mi, 2Gi, 500M, 1048576; 0 means no limit. */
export function parseSize(value: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(|k|M|G|T|Ki|Mi|Gi|Ti)$/.exec(value.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (SIZE_UNITS[m[2] ?? ""] ?? 1));
}
