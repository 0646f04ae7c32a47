// Test PKI for the embedded control plane: a CA, the apiserver's serving cert
// and the service-account signing key pair, made with the openssl CLI (Node's
// crypto can parse certificates but not issue them).
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Pki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  saKey: string;
  saPub: string;
}

/** Runs the openssl CLI in `cwd` (its stderr is kept for the error). */
export function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

export function makePki(dir: string): Pki {
  const p = (f: string) => join(dir, f);
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"], dir);
  openssl(
    ["req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=quarry-test-ca", "-days", "2", "-out", "ca.crt"],
    dir,
  );
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "apiserver.key"], dir);
  openssl(
    ["req", "-new", "-key", "apiserver.key", "-subj", "/CN=kube-apiserver", "-out", "apiserver.csr"],
    dir,
  );
  writeFileSync(
    p("san.ext"),
    "subjectAltName=IP:127.0.0.1,IP:198.18.1.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n" +
      "extendedKeyUsage=serverAuth\n",
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "apiserver.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "2",
      "-extfile",
      "san.ext",
      "-out",
      "apiserver.crt",
    ],
    dir,
  );
  openssl(["genrsa", "-out", "sa.key", "2048"], dir);
  openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
  return {
    caCert: p("ca.crt"),
    caKey: p("ca.key"),
    servingCert: p("apiserver.crt"),
    servingKey: p("apiserver.key"),
    saKey: p("sa.key"),
    saPub: p("sa.pub"),
  };
}

/**
 * A client certificate signed by the control plane's CA (`caCert`/`caKey` as
 * makePki wrote them): CN is the user, each O a group, e.g.
 * `system:node:127.0.0.1` in `system:nodes` for a kubelet. Writes
 * `<name>.crt` and `<name>.key` into `dir`.
 */
export function issueClientCert(
  ca: { caCert: string; caKey: string },
  dir: string,
  name: string,
  user: string,
  groups: string[] = [],
): { cert: string; key: string } {
  const subj = `${groups.map((g) => `/O=${g}`).join("")}/CN=${user}`;
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}.key`], dir);
  openssl(["req", "-new", "-key", `${name}.key`, "-subj", subj, "-out", `${name}.csr`], dir);
  writeFileSync(join(dir, `${name}.ext`), "extendedKeyUsage=clientAuth\n");
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      ca.caCert,
      "-CAkey",
      ca.caKey,
      "-CAcreateserial",
      "-CAserial",
      `${name}.srl`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    ],
    dir,
  );
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}
