// What a release changes in its copy of the charts, as text edits that keep every comment (the
// packaged values.yaml is what `helm show values` prints): the version in each Chart.yaml, and in
// each values.yaml the registry the images were pushed to and each service's image digest.

/** Replaces the one line `pattern` matches (with the m flag); fails unless exactly one does. */
function replaceOne(text: string, pattern: RegExp, replacement: string, what: string): string {
  const hits = text.match(new RegExp(pattern.source, "gm"))?.length ?? 0;
  if (hits !== 1) throw new Error(`${what}: expected one match of ${pattern}, found ${hits}`);
  return text.replace(new RegExp(pattern.source, "m"), replacement);
}

/** Chart.yaml with `version`, `appVersion` and every dependency's version set to `version`. */
export function stampChartYaml(text: string, version: string, what: string): string {
  let out = replaceOne(text, /^version: .*$/, `version: ${version}`, `${what} version`);
  if (/^appVersion:/m.test(out))
    out = replaceOne(out, /^appVersion: .*$/, `appVersion: "${version}"`, `${what} appVersion`);
  // dependencies: list items' `version:` lines, indented
  return out.replace(/^(\s+)version: .*$/gm, `$1version: ${version}`);
}

/** values.yaml with `global.image.registry` set to `registry`. */
export function stampRegistry(text: string, registry: string, what: string): string {
  return replaceOne(
    text,
    /^(global:\n(?:(?: {2}.*)?\n)*? {2}image:\n(?:(?: {4}.*)?\n)*? {4}registry: ).*$/,
    `$1${registry}`,
    `${what} global.image.registry`,
  );
}

/** A service chart's values.yaml with `image.digest` set. */
export function stampDigest(text: string, digest: string, what: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${what}: not a digest: ${digest}`);
  return replaceOne(
    text,
    /^(image:\n(?:(?: {2}.*)?\n)*? {2}digest: ).*$/,
    `$1"${digest}"`,
    `${what} image.digest`,
  );
}

/** The umbrella's values.yaml with `allInOne.image.digest` set (global.mode=all-in-one's one image). */
export function stampAllInOneDigest(text: string, digest: string, what: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${what}: not a digest: ${digest}`);
  return replaceOne(
    text,
    /^(allInOne:\n(?:(?: {2}.*)?\n)*? {2}image:\n(?:(?: {4}.*)?\n)*? {4}digest: ).*$/,
    `$1"${digest}"`,
    `${what} allInOne.image.digest`,
  );
}
