/**
 * `GET /containerLogs/<namespace>/<pod>/<container>`: the checks and error texts of upstream's
 * getContainerLogs and validateContainerLogStatus, then the log file rendered by ./cri-log.ts; with
 * `follow`, records appended later are streamed until the container stops running, the client
 * goes away or the server stops.
 */
import {open, readFile, stat} from 'node:fs/promises';
import type {ServerResponse} from 'node:http';
import {renderContainerLog} from './cri-log.js';
import {parseContainerLogQuery, type ContainerLogOptions} from './log-options.js';
import {writeText} from './responses.js';
import type {AgentServerProviders, ServedContainerStatus, ServedPod} from './types.js';

export interface ContainerLogRequest {
  namespace: string;
  pod: string;
  container: string;
  query: URLSearchParams;
}

export interface FollowOptions {
  /** How often a followed file is checked for new records. */
  pollIntervalMs: number;
  /** Aborted when the server stops: followers end their responses. */
  signal: AbortSignal;
}

type Failure = {status: number; message: string};

function hasContainer(pod: ServedPod, name: string): boolean {
  const spec = pod.spec ?? {};
  return [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].some((c) => c.name === name);
}

function containerStatus(pod: ServedPod, name: string): ServedContainerStatus | undefined {
  const status = pod.status ?? {};
  return [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])].find((s) => s.name === name);
}

/** Why there is no log to read, in upstream's words. */
function noLogMessage(pod: ServedPod, container: string, previous: boolean): string {
  const podName = pod.metadata.name ?? '';
  if (previous) return `previous terminated container "${container}" in pod "${podName}" not found`;
  const status = containerStatus(pod, container);
  const waiting = status?.state?.waiting;
  if (waiting) return `container "${container}" in pod "${podName}" is waiting to start: ${waiting.reason ?? ''}`;
  return `container "${container}" in pod "${podName}" is not available`;
}

async function findPod(providers: AgentServerProviders, namespace: string, name: string): Promise<ServedPod | undefined> {
  return (await providers.pods()).find((p) => (p.metadata.namespace ?? 'default') === namespace && p.metadata.name === name);
}

async function resolveLogFile(providers: AgentServerProviders, request: ContainerLogRequest, options: ContainerLogOptions): Promise<{path: string} | Failure> {
  const pod = await findPod(providers, request.namespace, request.pod);
  if (!pod) return {status: 404, message: `pod "${request.pod}" does not exist`};
  if (!hasContainer(pod, request.container)) return {status: 404, message: `container "${request.container}" not found in pod "${request.pod}"`};
  const path = await providers.logPath(request.namespace, request.pod, request.container, options.previous);
  if (path === undefined) return {status: 400, message: noLogMessage(pod, request.container, options.previous)};
  return {path};
}

async function isStillRunning(providers: AgentServerProviders, request: ContainerLogRequest): Promise<boolean> {
  const pod = await findPod(providers, request.namespace, request.pod).catch(() => undefined);
  if (!pod) return false;
  const status = containerStatus(pod, request.container);
  // Without a status there is nothing to say it stopped; keep following until the client leaves.
  return status?.state === undefined || status.state.running !== undefined;
}

export async function serveContainerLogs(
  providers: AgentServerProviders,
  request: ContainerLogRequest,
  res: ServerResponse,
  follow: FollowOptions,
  nowMs: number = Date.now(),
): Promise<void> {
  const parsed = parseContainerLogQuery(request.query, nowMs);
  if ('status' in parsed) return writeText(res, parsed.status, parsed.message);
  const options = parsed.options;
  const resolved = await resolveLogFile(providers, request, options);
  if ('status' in resolved) return writeText(res, resolved.status, resolved.message);

  let data: Buffer;
  try {
    data = await readFile(resolved.path);
  } catch (error) {
    return writeText(res, 400, `failed to open log file "${resolved.path}": ${(error as Error).message}`);
  }
  // Only complete lines are rendered; a half-written last record waits for the follower.
  const complete = options.follow ? data.lastIndexOf(0x0a) + 1 : data.length;
  const output = renderContainerLog(data.subarray(0, complete), options);
  res.writeHead(200, {'Content-Type': 'text/plain; charset=utf-8'});
  res.write(output);
  const remaining = options.limitBytes === undefined ? undefined : options.limitBytes - output.length;
  if (!options.follow || remaining === 0) {
    res.end();
    return;
  }
  await followLog(providers, request, res, follow, resolved.path, complete, {...options, tailLines: undefined, limitBytes: remaining});
  res.end();
}

async function followLog(
  providers: AgentServerProviders,
  request: ContainerLogRequest,
  res: ServerResponse,
  follow: FollowOptions,
  path: string,
  startOffset: number,
  options: ContainerLogOptions,
): Promise<void> {
  let offset = startOffset;
  let remaining = options.limitBytes;
  let closed = false;
  res.once('close', () => (closed = true));
  while (!closed && !follow.signal.aborted) {
    await sleep(follow.pollIntervalMs, follow.signal);
    if (closed || follow.signal.aborted) return;
    const size = await stat(path).then((s) => s.size, () => 0);
    if (size < offset) offset = 0; // rotated or truncated: the live file starts over
    if (size === offset) {
      if (!(await isStillRunning(providers, request))) return;
      continue;
    }
    const chunk = await readRange(path, offset, size);
    const complete = chunk.lastIndexOf(0x0a) + 1;
    if (complete === 0) continue;
    offset += complete;
    const output = renderContainerLog(chunk.subarray(0, complete), {...options, limitBytes: remaining});
    res.write(output);
    if (remaining !== undefined) {
      remaining -= output.length;
      if (remaining <= 0) return;
    }
  }
}

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(to - from);
    const {bytesRead} = await handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, {once: true});
  });
}
