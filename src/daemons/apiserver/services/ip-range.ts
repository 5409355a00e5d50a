/**
 * IP arithmetic for the service CIDRs (pure): addresses as bigints, the usable addresses of a range
 * as upstream's allocator counts them (the network address is never handed out, nor for IPv4 the
 * broadcast address), and the static/dynamic split of a range.
 */
import {isIP} from 'node:net';

export type IPFamily = 'IPv4' | 'IPv6';

export interface IPRange {
  /** The CIDR as given (`10.0.0.0/24`). */
  cidr: string;
  family: IPFamily;
  /** The network address. */
  base: bigint;
  /** Number of addresses in the CIDR. */
  size: bigint;
}

export function familyOf(ip: string): IPFamily | undefined {
  const f = isIP(ip);
  return f === 4 ? 'IPv4' : f === 6 ? 'IPv6' : undefined;
}

function expandIPv6(address: string): string[] {
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const groups = [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  const last = groups[groups.length - 1] ?? '';
  if (last.includes('.')) {
    const v4 = ipv4ToBigInt(last);
    groups.splice(groups.length - 1, 1, (v4 >> 16n).toString(16), (v4 & 0xffffn).toString(16));
  }
  return groups.map((g) => g.padStart(4, '0'));
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((n, octet) => (n << 8n) + BigInt(Number(octet)), 0n);
}

export function ipToBigInt(ip: string): bigint {
  return familyOf(ip) === 'IPv6' ? BigInt('0x' + expandIPv6(ip).join('')) : ipv4ToBigInt(ip);
}

/** The canonical text of an address (RFC 5952 for IPv6: lower case, longest zero run as `::`). */
export function bigIntToIp(value: bigint, family: IPFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join('.');
  const groups = value.toString(16).padStart(32, '0').match(/.{4}/g)!.map((g) => g.replace(/^0+(?=.)/, ''));
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}

/** The canonical form of an address, or undefined when it is not one. */
export function canonicalIp(ip: string): string | undefined {
  const family = familyOf(ip);
  return family ? bigIntToIp(ipToBigInt(ip), family) : undefined;
}

export function parseRange(cidr: string): IPRange {
  const [address = '', bitsText = ''] = cidr.trim().split('/');
  const family = familyOf(address);
  if (!family) throw new Error(`${JSON.stringify(cidr)} is not a CIDR`);
  const width = family === 'IPv4' ? 32n : 128n;
  const bits = BigInt(Number(bitsText));
  const hostBits = width - bits;
  const base = (ipToBigInt(address) >> hostBits) << hostBits;
  return {cidr: `${bigIntToIp(base, family)}/${bitsText}`, family, base, size: 1n << hostBits};
}

/** The number of addresses the allocator may hand out: without the network address, and for IPv4 the broadcast. */
export function usableSize(range: IPRange): bigint {
  const reserved = range.family === 'IPv4' ? 2n : 1n;
  return range.size > reserved ? range.size - reserved : 0n;
}

/** The address at `offset` among the usable ones (offset 0 is the first address after the network address). */
export function addressAt(range: IPRange, offset: bigint): string {
  return bigIntToIp(range.base + 1n + offset, range.family);
}

/** The offset of `ip` among the usable addresses, or undefined when it is not one of them. */
export function offsetOf(range: IPRange, ip: string): bigint | undefined {
  if (familyOf(ip) !== range.family) return undefined;
  const offset = ipToBigInt(ip) - range.base - 1n;
  return offset >= 0n && offset < usableSize(range) ? offset : undefined;
}

/** The first usable address of a CIDR: the ClusterIP of the default (`orch`) service. */
export function firstAddress(cidr: string): string {
  return addressAt(parseRange(cidr), 0n);
}

/**
 * Upstream's static subrange (ServiceIPStaticSubrange): the lower min(max(16, size/16), 256)
 * addresses are left for clients that ask for a given IP; dynamic allocation tries above them first.
 */
export function staticBand(size: bigint): bigint {
  const band = size / 16n < 16n ? 16n : size / 16n > 256n ? 256n : size / 16n;
  return band < size ? band : 0n;
}
