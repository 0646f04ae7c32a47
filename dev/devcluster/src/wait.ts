// Polling for test assertions only (controllers never poll).
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const detail = lastErr instanceof Error ? `: last error ${lastErr.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
