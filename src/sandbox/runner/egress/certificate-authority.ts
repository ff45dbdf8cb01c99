import { generateKeyPairSync, randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { createSecureContext, type SecureContext } from "node:tls";
import forge from "node-forge";

const day = 86_400_000;

/**
 * The runner's certificate authority for TLS interception: made at start, its private key in
 * this process's memory only (never on disk, so no sandbox can ever read it). It mints a leaf
 * certificate for a host only when the proxy intercepts that host (allowlisted, with a secret
 * in scope), valid for a week and cached per host. Keys are made by Node's crypto (RSA 2048);
 * node-forge builds and signs the certificates.
 */
export class CertificateAuthority {
  private readonly contexts = new Map<string, SecureContext>();

  private constructor(
    private readonly key: forge.pki.rsa.PrivateKey,
    private readonly certificate: forge.pki.Certificate,
    /** The CA certificate, PEM: what sandboxes trust. */
    readonly certificatePem: string,
  ) {}

  static create(name = "Cairn sandbox egress"): CertificateAuthority {
    const { key, publicKey } = newKeys();
    const now = Date.now();
    const certificate = forge.pki.createCertificate();
    certificate.publicKey = publicKey;
    certificate.serialNumber = serial();
    certificate.validity.notBefore = new Date(now - day);
    certificate.validity.notAfter = new Date(now + 3650 * day);
    const subject = [
      { name: "commonName", value: `${name} ${new Date(now).toISOString().slice(0, 10)}` },
    ];
    certificate.setSubject(subject);
    certificate.setIssuer(subject);
    certificate.setExtensions([
      { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      { name: "subjectKeyIdentifier" },
    ]);
    certificate.sign(key, forge.md.sha256.create());
    return new CertificateAuthority(key, certificate, forge.pki.certificateToPem(certificate));
  }

  /** A TLS server context for `host`, with a leaf certificate this CA signed. */
  contextFor(host: string): SecureContext {
    let context = this.contexts.get(host);
    if (context === undefined) {
      context = this.mint(host);
      this.contexts.set(host, context);
    }
    return context;
  }

  private mint(host: string): SecureContext {
    const { publicKey, pem } = newKeys();
    const now = Date.now();
    const leaf = forge.pki.createCertificate();
    leaf.publicKey = publicKey;
    leaf.serialNumber = serial();
    leaf.validity.notBefore = new Date(now - day);
    leaf.validity.notAfter = new Date(now + 7 * day);
    leaf.setSubject([{ name: "commonName", value: host }]);
    leaf.setIssuer(this.certificate.subject.attributes);
    leaf.setExtensions([
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [isIP(host) === 0 ? { type: 2, value: host } : { type: 7, ip: host }],
      },
      {
        name: "authorityKeyIdentifier",
        keyIdentifier: this.certificate.generateSubjectKeyIdentifier().getBytes(),
      },
    ]);
    leaf.sign(this.key, forge.md.sha256.create());
    return createSecureContext({ key: pem, cert: forge.pki.certificateToPem(leaf) });
  }
}

function newKeys() {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const key = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  const publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  return { key, publicKey, pem };
}

// Positive, 16 random bytes.
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString("hex");
}
