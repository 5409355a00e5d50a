/**
 * Traffic test helpers: the write load of ./traffic-load.mjs run in its own process, and the check
 * that every write it sent is accounted for by a final list (none lost, applied twice or unknown).
 */
import {spawn} from 'node:child_process';
import {join} from 'node:path';
import {repoRoot} from './run-orch.js';
import type {ApiClient} from './apiserver.js';

export interface LoadOptions {
  orchconfig: string;
  protocol?: 'http1' | 'http1-close' | 'h2';
  connections?: number;
  concurrency?: number;
  count: number;
  sizes: number[];
  format?: 'json' | 'yaml' | 'protobuf';
  namespace?: string;
  prefix: string;
  /** Hold watches open on the same connections (HTTP/2) or pool (HTTP/1.1) while writing. */
  watch?: boolean;
}

export interface LoadResult {
  protocol: string;
  connections: number;
  format: string;
  size: number;
  requests: number;
  failures: number;
  errors: Record<string, number>;
  acknowledged: string[];
  refused: {name: string; code: number; kind?: string; message?: string}[];
  unknown: string[];
  p50Ms: number;
  p99Ms: number;
  /** With watch: acknowledged names a watch never reported ADDED. */
  watchMissing?: string[];
  /** With watch: how often the server ended a watch and it was resumed from its last resourceVersion. */
  watchRestarts?: number;
  /** With watch: the messages of ERROR events (a 410 makes the watch list again). */
  watchErrors?: string[];
}

const LOAD_SCRIPT = join(repoRoot, 'test', 'helpers', 'traffic-load.mjs');

/**
 * Runs a client program as a child process (killed after timeoutMs) and returns the JSON it prints on
 * stdout; a program that prints no JSON (or, with `requireSuccess`, exits non-zero) rejects with its output.
 */
export function runJsonProcess<T>(command: string, args: string[], o: {timeoutMs?: number; requireSuccess?: boolean} = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe']});
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const failed = () => new Error(`${command} ${args.join(' ')} exited ${code}:\n${out}\n${err}`);
      if (o.requireSuccess && code !== 0) return reject(failed());
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(failed());
      }
    });
  });
}

/** Runs the load in a child process (bounded by timeoutMs) and returns its per-size results. */
export function runLoad(options: LoadOptions, timeoutMs = 90_000): Promise<LoadResult[]> {
  return runJsonProcess<LoadResult[]>(process.execPath, [LOAD_SCRIPT, JSON.stringify(options)], {timeoutMs, requireSuccess: true});
}

/** A one-line summary per result, for assertion messages. */
export function summarize(results: LoadResult[]): string {
  return results.map((r) => `${r.protocol} x${r.connections} ${r.format} ${r.size} B: ${r.requests} requests, ${r.failures} failures ${JSON.stringify(r.errors)}`).join('\n');
}

/** Names of the ConfigMaps in `namespace` whose names start with `prefix`, paging through the list. */
export async function listNames(client: ApiClient, namespace: string, prefix: string): Promise<string[]> {
  const names: string[] = [];
  let token = '';
  do {
    const res = await client.get(`/api/v1/namespaces/${namespace}/configmaps?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`, {timeoutMs: 60_000});
    if (res.status !== 200) throw new Error(`list configmaps: ${res.status} ${res.text.slice(0, 200)}`);
    for (const item of res.body.items as {metadata: {name: string}}[]) if (item.metadata.name.startsWith(prefix)) names.push(item.metadata.name);
    token = res.body.metadata?.continue ?? '';
  } while (token);
  return names;
}

/**
 * What a final list says about the writes: acknowledged ones missing from it (lost), refused ones
 * present (applied though refused), and names listed twice.
 */
export function accountFor(results: LoadResult[], listed: string[]): {lost: string[]; appliedThoughRefused: string[]; duplicated: string[]} {
  const present = new Set(listed);
  const acknowledged = results.flatMap((r) => r.acknowledged);
  const refused = results.flatMap((r) => r.refused.map((x) => x.name));
  return {
    lost: acknowledged.filter((n) => !present.has(n)),
    appliedThoughRefused: refused.filter((n) => present.has(n)),
    duplicated: listed.filter((n, i) => listed.indexOf(n) !== i),
  };
}
