/**
 * What the agent measures of its machine for the Node object: CPUs, memory, the size of the filesystem
 * holding --root-dir, network interfaces, and the identity files of nodeInfo. All I/O goes through
 * MachineSources so tests run on fixtures.
 */
import { readFile as fsReadFile, statfs as fsStatfs } from 'node:fs/promises';
import os from 'node:os';
import { parseMeminfo } from '../eviction/observations.js';
import type { InterfaceAddress } from './addresses.js';
import type { MachineResources } from './capacity.js';

const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };

/** Go's GOARCH for a Node.js process.arch (`x64` -> `amd64`): the `orch.io/arch` label and nodeInfo.architecture. */
export function goArch(arch: string = process.arch): string {
  return GO_ARCH[arch] ?? arch;
}

export interface MachineIdentity {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
}

export interface MachineFacts {
  /** os.hostname(), as the system reports it (not lowercased). */
  hostname: string;
  resources: MachineResources;
  interfaces: InterfaceAddress[];
  identity: MachineIdentity;
}

export interface MachineSources {
  readFile(path: string): Promise<string>;
  statfs(path: string): Promise<{ blocks: number; bsize: number }>;
  cpuCount(): number;
  hostname(): string;
  kernelRelease(): string;
  networkInterfaces(): InterfaceAddress[];
}

export const hostMachineSources: MachineSources = {
  readFile: (path) => fsReadFile(path, 'utf8'),
  statfs: (path) => fsStatfs(path),
  cpuCount: () => os.cpus().length,
  hostname: () => os.hostname(),
  kernelRelease: () => os.release(),
  networkInterfaces: () =>
    Object.values(os.networkInterfaces()).flatMap((list) =>
      (list ?? []).map((i) => ({
        address: i.address,
        // Node 18.0-18.3 reported the family as a number.
        family: (String(i.family) === '6' || i.family === 'IPv6' ? 'IPv6' : 'IPv4') as InterfaceAddress['family'],
        internal: i.internal,
      })),
    ),
};

/** PRETTY_NAME of an os-release file, unquoted; upstream falls back to "Linux". */
export function prettyName(osRelease: string): string {
  for (const line of osRelease.split('\n')) {
    const match = /^PRETTY_NAME=(.*)$/.exec(line.trim());
    if (match) return match[1].replace(/^(["'])(.*)\1$/, '$2');
  }
  return 'Linux';
}

async function readTrimmed(sources: MachineSources, path: string): Promise<string> {
  try {
    return (await sources.readFile(path)).trim();
  } catch {
    // Unreadable identity files (product_uuid needs root) leave the field empty, as upstream does.
    return '';
  }
}

/** Measures the machine; throws only when memory cannot be read (the node would have no capacity). */
export async function readMachineFacts(rootDir: string, sources: MachineSources = hostMachineSources): Promise<MachineFacts> {
  const meminfo = parseMeminfo(await sources.readFile('/proc/meminfo'));
  if (meminfo.MemTotal === undefined) throw new Error('/proc/meminfo lacks MemTotal');
  let rootfsBytes: number | undefined;
  try {
    const fs = await sources.statfs(rootDir);
    rootfsBytes = fs.blocks * fs.bsize;
  } catch {
    rootfsBytes = undefined;
  }
  const osRelease = await readTrimmed(sources, '/etc/os-release');
  return {
    hostname: sources.hostname(),
    resources: { cpuCores: sources.cpuCount(), memoryBytes: meminfo.MemTotal, rootfsBytes },
    interfaces: sources.networkInterfaces(),
    identity: {
      machineID: await readTrimmed(sources, '/etc/machine-id'),
      systemUUID: (await readTrimmed(sources, '/sys/class/dmi/id/product_uuid')).toLowerCase(),
      bootID: await readTrimmed(sources, '/proc/sys/kernel/random/boot_id'),
      kernelVersion: sources.kernelRelease(),
      osImage: osRelease ? prettyName(osRelease) : 'Linux',
    },
  };
}
