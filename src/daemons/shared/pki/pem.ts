/**
 * PEM (RFC 7468) encoding and decoding: base64 of DER between `-----BEGIN <label>-----` and
 * `-----END <label>-----` lines, 64 characters a line. Pure; hand-written because it is a dozen
 * lines and every certificate and key file of the server goes through it.
 */

export interface PemBlock {
  /** The label between BEGIN and END, e.g. `CERTIFICATE`, `PRIVATE KEY`, `EC PRIVATE KEY`. */
  label: string;
  der: Buffer;
}

export function encodePem(label: string, der: Uint8Array | ArrayBuffer): string {
  const base64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64');
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
const BASE64_BODY = /^[A-Za-z0-9+/=\s]*$/;

/** Every PEM block of a text, in order; text outside blocks (comments, bundles' headers) is ignored. */
export function decodePem(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(BLOCK)) {
    const [, label, body] = match;
    // Encapsulated headers (RFC 1421 `Proc-Type:`) mean an encrypted legacy key we cannot use.
    if (!BASE64_BODY.test(body)) throw new Error(`PEM block "${label}" is not plain base64 (encrypted keys are not supported)`);
    blocks.push({label, der: Buffer.from(body.replace(/\s+/g, ''), 'base64')});
  }
  return blocks;
}

/** The DER of every block with the given label, e.g. all certificates of a CA bundle. */
export function decodePemBlocks(text: string, label: string): Buffer[] {
  return decodePem(text).filter((b) => b.label === label).map((b) => b.der);
}

/** Splits a bundle into one PEM text per certificate (Node's `tls` `ca` option wants them apart or joined; both work). */
export function splitCertificateBundle(text: string): string[] {
  return decodePemBlocks(text, 'CERTIFICATE').map((der) => encodePem('CERTIFICATE', der));
}
