/** Parsers for addresses: a single IP, CIDR lists (at most one per address family) and port ranges. */
import { isIP } from 'node:net';
import { ValueFormatError, splitList } from './value-error.js';

export interface PortRange {
  /** First port of the range. */
  base: number;
  /** Number of ports; the last port is base + size - 1. */
  size: number;
}

export interface Cidr {
  text: string;
  address: string;
  prefix: number;
  family: 4 | 6;
}

export function parseIp(raw: string): string {
  const text = raw.trim();
  if (isIP(text) === 0) throw new ValueFormatError('not an IPv4 or IPv6 address');
  return text;
}

/** One CIDR such as 10.0.0.0/24 or fd00::/108. */
export function parseCidr(text: string): Cidr {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  const family = match ? isIP(match[1]) : 0;
  if (!match || family === 0) throw new ValueFormatError(`${JSON.stringify(text)} is not a CIDR`);
  const prefix = Number(match[2]);
  const bits = family === 4 ? 32 : 128;
  if (prefix > bits) {
    throw new ValueFormatError(`${JSON.stringify(text)}: the prefix length of an IPv${family} CIDR is at most ${bits}`);
  }
  return { text: text.trim(), address: match[1], prefix, family: family as 4 | 6 };
}

/** One CIDR, or two of different families (dual-stack), comma-separated. */
export function parseCidrList(raw: string): Cidr[] {
  const cidrs = splitList(raw).map(parseCidr);
  if (cidrs.length === 0) throw new ValueFormatError('no CIDR given');
  if (cidrs.length > 2) throw new ValueFormatError('at most two CIDRs may be given, one IPv4 and one IPv6');
  if (cidrs.length === 2 && cidrs[0].family === cidrs[1].family) {
    throw new ValueFormatError('two CIDRs must be dual-stack: one IPv4 and one IPv6');
  }
  return cidrs;
}

export function parseCidrs(raw: string): string[] {
  return parseCidrList(raw).map((c) => c.text);
}

/** apimachinery's net.ParsePortRange: `N1-N2`, `N` (one port) or `N+M` (N to N+M). */
export function parsePortRange(raw: string): PortRange {
  const text = raw.trim();
  const match = /^(\d+)(?:([-+])(\d+))?$/.exec(text);
  if (!match) throw new ValueFormatError('not a port range');
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : match[2] === '-' ? Number(match[3]) : low + Number(match[3]);
  if (low < 1 || low > 65535 || high > 65535) throw new ValueFormatError('ports must be between 1 and 65535');
  if (high < low) throw new ValueFormatError('end port cannot be less than start port');
  return { base: low, size: high - low + 1 };
}

export function formatPortRange(range: PortRange): string {
  return `${range.base}-${range.base + range.size - 1}`;
}
