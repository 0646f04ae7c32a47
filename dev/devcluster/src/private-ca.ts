// A private CA and a serving certificate it signed, for test sources that
// speak TLS the way an operator's internal git server or registry does: a
// client trusts them only when given the CA. Made with the openssl CLI, like
// the control plane's PKI (pki.ts).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { openssl } from "./pki.ts";

export interface PrivateCa {
  dir: string;
  /** PEM of the CA certificate (what a client adds to its trust). */
  caPem: string;
  /** Files of the serving certificate and key, for a server's TLS config. */
  certFile: string;
  keyFile: string;
  certPem: string;
  keyPem: string;
}

export interface PrivateCaOptions {
  /** Subject alternative names of the serving certificate. */
  ips?: string[];
  dnsNames?: string[];
  /** Common name of the CA, so two CAs in one test are told apart. */
  caName?: string;
}

export function makePrivateCa(opts: PrivateCaOptions = {}): PrivateCa {
  const dir = mkdtempSync(join(tmpdir(), "quarry-private-ca-"));
  const run = (args: string[]) => openssl(args, dir);
  run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"]);
  run([
    "req",
    "-x509",
    "-new",
    "-key",
    "ca.key",
    "-subj",
    `/CN=${opts.caName ?? "quarry-private-ca"}`,
    "-days",
    "2",
    "-out",
    "ca.crt",
  ]);
  run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "server.key"]);
  run(["req", "-new", "-key", "server.key", "-subj", "/CN=quarry-test-source", "-out", "server.csr"]);
  const sans = [...(opts.ips ?? []).map((ip) => `IP:${ip}`), ...(opts.dnsNames ?? []).map((d) => `DNS:${d}`)];
  writeFileSync(
    join(dir, "server.ext"),
    `${sans.length ? `subjectAltName=${sans.join(",")}\n` : ""}extendedKeyUsage=serverAuth\n`,
  );
  run([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "server.ext",
    "-out",
    "server.crt",
  ]);
  const certFile = join(dir, "server.crt");
  const keyFile = join(dir, "server.key");
  return {
    dir,
    caPem: readFileSync(join(dir, "ca.crt"), "utf8"),
    certFile,
    keyFile,
    certPem: readFileSync(certFile, "utf8"),
    keyPem: readFileSync(keyFile, "utf8"),
  };
}

/**
 * A non-loopback IPv4 address of this machine. TLS sources listen there:
 * clients treat loopback specially (the OCI client speaks plain http to it,
 * proxies are often bypassed for it), and an operator's sources are never on
 * loopback.
 */
export function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === "IPv4" && !a.internal && !a.address.startsWith("169.254.")) return a.address;
    }
  }
  throw new Error("no non-loopback IPv4 address on this machine for a TLS test source");
}
