/**
 * How the secure port is bound (--permit-address-sharing, --permit-port-sharing).
 *
 * Address sharing (SO_REUSEADDR): libuv sets it on every TCP listening socket on Unix, as Go's net
 * package does, so a restarted server binds at once although connections of the previous one sit
 * in TIME_WAIT, with or without the option; upstream's option changes nothing more on Linux either.
 *
 * Port sharing (SO_REUSEPORT): net.Server's `reusePort` listen option arrived in Node 22.12 and 23.1.
 * Older runtimes (Node 20, which orch supports) cannot set a socket option before bind, so there the
 * socket is made by node-unix-socket's native socketNewSoReuseportFd (socket, SO_REUSEADDR and
 * SO_REUSEPORT, bind; an addon made for this) and the server listens on its descriptor, as Node's own
 * `reusePort` would: every server bound so on one address and port gets a share of the connections
 * from the kernel.
 */
import {createRequire} from 'node:module';
import {isIPv4, type ListenOptions} from 'node:net';

/** Whether this runtime's net.Server.listen knows `reusePort`. */
export function runtimeHasReusePort(version = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** A bound socket's descriptor with SO_REUSEPORT set (node-unix-socket's createReuseportFd). */
export type ReuseportBinder = (port: number, host: string) => number;

/**
 * node-unix-socket's native part, loaded only when a server asks for port sharing. Its prebuilt
 * binaries are optional dependencies of their own (Linux x64, glibc or musl: the ones the registry
 * has); the package's JavaScript wrapper is not used because it names binaries for every platform,
 * which npm cannot lock where the registry lacks them. Undefined where none loads.
 */
function loadReuseportBinder(): ReuseportBinder | undefined {
  const require = createRequire(import.meta.url);
  for (const name of ['node-unix-socket-linux-x64-gnu', 'node-unix-socket-linux-x64-musl']) {
    try {
      const native = require(name) as {socketNewSoReuseportFd(domain: 'ipv4' | 'ipv6', port: number, host: string): number};
      return (port, host) => native.socketNewSoReuseportFd(isIPv4(host) ? 'ipv4' : 'ipv6', port, host);
    } catch {
      // not installed for this platform
    }
  }
  return undefined;
}

/** Node's wording of a failed bind (`listen EADDRINUSE: address already in use 127.0.0.1:6443`), from the addon's bare text. */
function bindError(error: unknown, host: string, port: number): Error {
  const text = String((error as Error)?.message ?? error);
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (/address already in use/i.test(text)) return Object.assign(new Error(`listen EADDRINUSE: address already in use ${where}`), {code: 'EADDRINUSE'});
  if (/permission denied/i.test(text)) return Object.assign(new Error(`listen EACCES: permission denied ${where}`), {code: 'EACCES'});
  if (/cannot assign requested address/i.test(text)) return Object.assign(new Error(`listen EADDRNOTAVAIL: address not available ${where}`), {code: 'EADDRNOTAVAIL'});
  return new Error(`listen ${where}: ${text}`);
}

/**
 * The listen options of a server on `host:port` (no host: every address, as Node binds by default).
 * With `reusePort` on a runtime without net.Server's own option, the socket is bound here (a bind
 * error is thrown, worded as Node's) and the options name its descriptor.
 */
/** Where a server listens: an address and port, or a socket already bound (net.Server.listen takes either). */
export type ListenTarget = ListenOptions | {fd: number};

export function listenOptions(port: number, host: string | undefined, reusePort: boolean, binder?: ReuseportBinder, warn?: (message: string) => void): ListenTarget {
  if (!reusePort) return {port, host};
  if (runtimeHasReusePort() && !binder) return {port, host, reusePort: true} as ListenOptions;
  const bind = binder ?? loadReuseportBinder();
  if (!bind) {
    warn?.(`--permit-port-sharing has no effect on Node ${process.versions.node} on ${process.platform}-${process.arch}: net.Server binds with SO_REUSEPORT from Node 22.12, and node-unix-socket's binary is not installed here; binding without it`);
    return {port, host};
  }
  // Node's default without a host is the IPv6 any-address (dual stack), or IPv4's where IPv6 is off.
  const hosts = host ? [host] : ['::', '0.0.0.0'];
  let last: unknown;
  for (const h of hosts) {
    try {
      return {fd: bind(port, h)};
    } catch (error) {
      last = bindError(error, h, port);
      if ((last as {code?: string}).code === 'EADDRINUSE') break;
    }
  }
  throw last;
}
