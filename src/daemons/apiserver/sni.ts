/**
 * --tls-sni-cert-key: extra serving certificates chosen by the name the client asks for (SNI), with
 * upstream's precedence: an exact name beats a wildcard, and names given explicitly after ':' beat
 * the names read from the certificate itself (its DNS SANs, or its CommonName when it has none).
 */
import {X509Certificate} from 'node:crypto';
import {readFile} from 'node:fs/promises';
import {createSecureContext, type SecureContext} from 'node:tls';

export interface SniEntry {
  certFile: string;
  keyFile: string;
  /** Domain patterns given after ':'; empty means "the names in the certificate". */
  names: string[];
}

export function parseSniEntry(text: string): SniEntry {
  const colon = text.indexOf(':');
  const files = (colon === -1 ? text : text.slice(0, colon)).split(',');
  const names = colon === -1 ? [] : text.slice(colon + 1).split(',').map((n) => n.trim()).filter(Boolean);
  return {certFile: files[0].trim(), keyFile: (files[1] ?? '').trim(), names};
}

interface Candidate {
  pattern: string;
  explicit: boolean;
  context: SecureContext;
}

/** The names a certificate serves: DNS SANs, else the CommonName. */
export function certificateNames(pem: string): string[] {
  const cert = new X509Certificate(pem);
  const dns = (cert.subjectAltName ?? '')
    .split(', ')
    .filter((e) => e.startsWith('DNS:'))
    .map((e) => e.slice(4));
  if (dns.length > 0) return dns;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject)?.[1];
  return cn ? [cn] : [];
}

function matches(pattern: string, name: string): 'exact' | 'wildcard' | undefined {
  const p = pattern.toLowerCase();
  const n = name.toLowerCase();
  if (p === n) return 'exact';
  if (p.startsWith('*.') && n.endsWith(p.slice(1)) && !n.slice(0, n.length - p.length + 1).includes('.')) return 'wildcard';
  return undefined;
}

/** Picks the context for a server name, or undefined for the default certificate. */
export function chooseContext(candidates: readonly Candidate[], serverName: string): SecureContext | undefined {
  let best: {rank: number; context: SecureContext} | undefined;
  for (const c of candidates) {
    const kind = matches(c.pattern, serverName);
    if (!kind) continue;
    // Lower is better: explicit exact, extracted exact, explicit wildcard, extracted wildcard.
    const rank = (kind === 'exact' ? 0 : 2) + (c.explicit ? 0 : 1);
    if (!best || rank < best.rank) best = {rank, context: c.context};
  }
  return best?.context;
}

export async function loadSniCandidates(entries: readonly SniEntry[]): Promise<Candidate[]> {
  const candidates: Candidate[] = [];
  for (const entry of entries) {
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(entry.certFile, 'utf8'), readFile(entry.keyFile, 'utf8')]);
    } catch (error) {
      throw new Error(`--tls-sni-cert-key: unable to read ${entry.certFile} / ${entry.keyFile}: ${(error as Error).message}`);
    }
    const context = createSecureContext({cert, key});
    const explicit = entry.names.length > 0;
    for (const pattern of explicit ? entry.names : certificateNames(cert)) candidates.push({pattern, explicit, context});
  }
  return candidates;
}

/** Node's SNICallback over the candidates; unknown names get the default certificate. */
export function sniCallback(candidates: readonly Candidate[]): (serverName: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void {
  return (serverName, cb) => cb(null, chooseContext(candidates, serverName));
}
