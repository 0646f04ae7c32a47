// X.509 for the conversion webhook: a self-signed CA and the serving certificate it signs, ECDSA
// P-256. Issuing is @peculiar/x509's (Node's crypto only parses certificates); reading them back
// is node:crypto's X509Certificate.
import { createPrivateKey, randomBytes, webcrypto, X509Certificate } from "node:crypto";
import { isIP } from "node:net";

type WebCryptoKey = webcrypto.CryptoKey;
type WebCryptoKeyPair = webcrypto.CryptoKeyPair;
type X509 = typeof import("@peculiar/x509");

let x509Lib: Promise<X509> | undefined;

/**
 * @peculiar/x509 (with tsyringe and a dozen ASN.1 packages) is imported at the first issuance,
 * not at start: the webhook is off by default, and with its Secret in place certificates are only
 * read, with node:crypto; the lifecycle controller's imports were 3-4 MiB larger with it
 * (docs/performance.md, "Import costs"). A failed import is not remembered.
 */
function loadX509(): Promise<X509> {
  x509Lib ??= (async () => {
    // @peculiar/x509 resolves its parts through tsyringe, which needs the Reflect polyfill first
    await import("reflect-metadata");
    const lib = await import("@peculiar/x509");
    lib.cryptoProvider.set(webcrypto as unknown as Parameters<typeof lib.cryptoProvider.set>[0]);
    return lib;
  })().catch((err: unknown) => {
    x509Lib = undefined;
    throw err;
  });
  return x509Lib;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** A certificate and its private key, PEM (the key PKCS#8). */
export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

export async function issueCa(commonName: string, validity: Validity): Promise<CertAndKey> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [commonName] }],
    ...validity,
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: `${cert.toString("pem")}\n`, keyPem: await keyToPem(x509, keys.privateKey) };
}

/** A serving certificate for `hosts` (DNS names, or IP addresses as IP SANs), signed by `ca`. */
export async function issueServingCert(
  ca: CertAndKey,
  hosts: string[],
  validity: Validity,
): Promise<CertAndKey> {
  if (hosts.length === 0) throw new Error("a serving certificate needs at least one host");
  const x509 = await loadX509();
  const keys = await generateKeys();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey("pkcs8", pemBody(x509, ca.keyPem), ALGORITHM, false, [
    "sign",
  ]);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: [{ CN: [hosts[0]!] }],
    issuer: caCert.subject,
    ...validity,
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        hosts.map((h) => (isIP(h) ? { type: "ip", value: h } : { type: "dns", value: h })),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: `${cert.toString("pem")}\n`, keyPem: await keyToPem(x509, keys.privateKey) };
}

/** What rotation decides by: validity, whom it was issued by, the hosts it names. */
export interface CertFacts extends Validity {
  isCa: boolean;
  /** DNS names and IP addresses of the subjectAltName. */
  hosts: string[];
  fingerprint: string;
}

/** Parses one PEM certificate; undefined when it is not one. */
export function certFacts(pem: string): CertFacts | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return undefined;
  }
  return {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    isCa: cert.ca,
    hosts: (cert.subjectAltName ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.startsWith("DNS:") || s.startsWith("IP Address:"))
      .map((s) => s.slice(s.indexOf(":") + 1)),
    fingerprint: cert.fingerprint256,
  };
}

/** Whether `leafPem` carries `caPem`'s signature (and names it as issuer). */
export function signedBy(leafPem: string, caPem: string): boolean {
  try {
    const leaf = new X509Certificate(leafPem);
    const ca = new X509Certificate(caPem);
    return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
  } catch {
    return false;
  }
}

/** Whether `keyPem` is the private key of `certPem` (a hand-edited Secret may pair them wrongly). */
export function keyMatches(certPem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** The certificates of a PEM bundle, each as its own PEM block. */
export function splitPem(bundle: string): string[] {
  return (
    bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((b) => `${b}\n`) ?? []
  );
}

async function generateKeys(): Promise<WebCryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as WebCryptoKeyPair;
}

async function keyToPem(x509: X509, key: WebCryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return `${x509.PemConverter.encode(der, "PRIVATE KEY")}\n`;
}

function pemBody(x509: X509, pem: string): ArrayBuffer {
  const [der] = x509.PemConverter.decode(pem);
  if (!der) throw new Error("no PEM block");
  return der;
}

// Positive 128-bit serials (RFC 5280: positive, at most 20 octets).
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString("hex");
}
