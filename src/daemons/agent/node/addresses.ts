/**
 * The node's addresses (upstream nodestatus.NodeAddress without a cloud provider):
 * InternalIP, Hostname, and a second InternalIP for a dual-stack --node-ip.
 *
 * The InternalIP is --node-ip; else --hostname-override when that is an IP; else an address of this
 * host's interfaces, IPv4 first (IPv6 first with `--node-ip=::`). Upstream would also try a DNS lookup
 * of the node name and the default-route interface; the first non-loopback interface address stands
 * in for both, which is what they find on the hosts this agent runs on.
 */
import { isIP, isIPv6 } from 'node:net';
import type { NodeAddress } from './types.js';

export interface InterfaceAddress {
  address: string;
  family: 'IPv4' | 'IPv6';
  /** Loopback (os.networkInterfaces' `internal`). */
  internal: boolean;
}

export interface AddressInput {
  /** The (lowercased) host name or --hostname-override. */
  hostname: string;
  /** --node-ip: one address or an IPv4,IPv6 pair; `0.0.0.0` or `::` alone ask for auto-detection. */
  nodeIPs?: readonly string[];
  interfaces: readonly InterfaceAddress[];
}

const isUnspecified = (ip: string) => ip === '0.0.0.0' || ip === '::';
const isLoopback = (ip: string) => ip.startsWith('127.') || ip === '::1';
const isLinkLocal = (ip: string) => ip.startsWith('169.254.') || /^fe[89ab]/i.test(ip);

/** Upstream's validateNodeIP: the address must be usable and belong to this host. */
function checkNodeIP(ip: string, interfaces: readonly InterfaceAddress[]): void {
  if (isIP(ip) === 0) throw new Error(`node IP: "${ip}" is not a valid IP address`);
  if (isLoopback(ip)) throw new Error("nodeIP can't be loopback address");
  if (isLinkLocal(ip)) throw new Error("nodeIP can't be a link-local unicast address");
  if (!interfaces.some((i) => i.address === ip)) throw new Error(`node IP: "${ip}" not found in the host's network interfaces`);
}

/** The first usable interface address, of the preferred family when there is one. */
function detectAddress(interfaces: readonly InterfaceAddress[], preferIPv6: boolean): string | undefined {
  const usable = interfaces.filter((i) => !i.internal && !isLinkLocal(i.address));
  const preferred = usable.find((i) => (i.family === 'IPv6') === preferIPv6);
  return (preferred ?? usable[0])?.address;
}

/** The node's addresses; throws when no InternalIP can be found or --node-ip is not this host's. */
export function nodeAddresses(input: AddressInput): NodeAddress[] {
  const [primary, secondary] = input.nodeIPs ?? [];
  let internalIP: string | undefined;
  if (primary !== undefined && !isUnspecified(primary)) {
    checkNodeIP(primary, input.interfaces);
    internalIP = primary;
  } else if (isIP(input.hostname) !== 0) {
    internalIP = input.hostname;
  } else {
    internalIP = detectAddress(input.interfaces, primary !== undefined && isIPv6(primary));
  }
  if (internalIP === undefined) throw new Error(`can't get ip address of node ${input.hostname}: no usable network interface address`);

  const addresses: NodeAddress[] = [
    { type: 'InternalIP', address: internalIP },
    { type: 'Hostname', address: input.hostname },
  ];
  if (secondary !== undefined) {
    checkNodeIP(secondary, input.interfaces);
    addresses.push({ type: 'InternalIP', address: secondary });
  }
  return addresses;
}
