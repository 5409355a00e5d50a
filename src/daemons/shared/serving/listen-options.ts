/**
 * How the secure port is bound (--permit-address-sharing, --permit-port-sharing).
 *
 * Address sharing (SO_REUSEADDR): libuv sets it on every TCP listening socket on Unix, as Go's net
 * package does, so a restarted server binds at once although connections of the previous one sit
 * in TIME_WAIT, with or without the option; upstream's option changes nothing more on Linux either.
 *
 * Port sharing (SO_REUSEPORT): net.Server's `reusePort` listen option arrived in Node 22.12 and 23.1.
 * On an older runtime the option cannot take effect; the server says so at start and binds alone
 * rather than pretend.
 */
import type {ListenOptions} from 'node:net';

/** Whether this runtime's net.Server.listen knows `reusePort`. */
export function runtimeHasReusePort(version = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

export function listenOptions(port: number, host: string | undefined, reusePort: boolean, warn: (message: string) => void): ListenOptions {
  if (reusePort && !runtimeHasReusePort()) {
    warn(`--permit-port-sharing has no effect on Node ${process.versions.node}: net.Server binds with SO_REUSEPORT only from Node 22.12 (reusePort); binding without it`);
  }
  return {port, host, ...(reusePort && runtimeHasReusePort() ? {reusePort: true} : {})};
}
