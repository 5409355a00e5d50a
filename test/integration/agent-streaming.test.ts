/**
 * The agent's streaming paths on its HTTPS port, at the wire level with a plain WebSocket client:
 * exec over the v5 channel protocol (stdin, its close message, stdout, the exit Status) and the
 * base64 protocol, /run, the answers to requests it cannot serve, and
 * --streaming-connection-idle-timeout (a connection without traffic closes; one with traffic
 * stays). A real process runtime runs the pod.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync} from 'node:fs';
import {request as httpsRequest} from 'node:https';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import WebSocket from 'ws';
import {AgentServers, serverConfigFromOptions, type AgentServerProviders} from '../../src/daemons/agent/server/index.js';
import {ProcessRuntime, type Pod} from '../../src/daemons/agent/runtime/index.js';
import {runtimeStreamingProviders} from '../../src/daemons/agent/streaming/providers.js';

const IDLE_MS = 600;
const dir = mkdtempSync(join(tmpdir(), 'agent-streaming-'));
const runtime = new ProcessRuntime({rootDir: join(dir, 'root'), minGracePeriodSeconds: 0, cgroups: false});
const pod: Pod = {
  metadata: {name: 'web', namespace: 'default', uid: 'uid-web'},
  spec: {containers: [{name: 'app', command: ['sleep', '300'], env: [{name: 'WHO', value: 'the pod'}]}]},
};
const providers: AgentServerProviders = {
  pods: () => [],
  runningPods: () => [],
  logPath: () => undefined,
  stats: () => ({node: {nodeName: 'n', startTime: ''}, pods: []}) as never,
  health: () => undefined,
  streaming: runtimeStreamingProviders(runtime, (ns, name) => (ns === 'default' && name === 'web' ? 'uid-web' : undefined)),
};
let servers: AgentServers;
let port: number;

beforeAll(async () => {
  await runtime.syncPod(pod);
  servers = new AgentServers({
    config: {...serverConfigFromOptions({'cert-dir': join(dir, 'pki'), address: '127.0.0.1'}), hostname: 'node-1', streamingConnectionIdleTimeoutMs: IDLE_MS},
    providers,
    portOverrides: {main: 0, readOnly: 0, healthz: 0},
  });
  await servers.start();
  port = servers.ports.main!;
});

afterAll(async () => {
  await servers?.stop();
  await runtime.shutdown(0);
  rmSync(dir, {recursive: true, force: true});
});

function connect(path: string, protocols: string[]): WebSocket {
  return new WebSocket(`wss://127.0.0.1:${port}${path}`, protocols, {rejectUnauthorized: false});
}

interface Exchange {
  protocol: string;
  channels: Map<number, Buffer>;
  closedAfterMs: number;
}

/** Runs a WebSocket exchange to its close, collecting what arrives per channel. */
function exchange(ws: WebSocket, onOpen: (ws: WebSocket) => void = () => {}, base64 = false): Promise<Exchange> {
  const channels = new Map<number, Buffer>();
  let openedAt = 0;
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      openedAt = Date.now();
      onOpen(ws);
    });
    ws.on('message', (data: Buffer) => {
      const channel = base64 ? data[0] - 48 : data[0];
      const payload = base64 ? Buffer.from(data.subarray(1).toString(), 'base64') : data.subarray(1);
      channels.set(channel, Buffer.concat([channels.get(channel) ?? Buffer.alloc(0), payload]));
    });
    ws.on('close', () => resolve({protocol: ws.protocol, channels, closedAfterMs: Date.now() - openedAt}));
    ws.on('error', reject);
  });
}

function post(path: string): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({host: '127.0.0.1', port, path, method: 'POST', rejectUnauthorized: false}, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('exec over WebSocket', () => {
  it('v5: stdin until its close message, stdout, and the exit code as a Status on the error channel', async () => {
    const ws = connect('/exec/default/web/app?command=sh&command=-c&command=cat%3B%20echo%20%24WHO%3B%20exit%205&stdin=1&stdout=1&stderr=1', ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
    const result = await exchange(ws, (open) => {
      open.send(Buffer.concat([Buffer.from([0]), Buffer.from('typed\n')]));
      open.send(Buffer.from([255, 0]));
    });
    expect(result.protocol).toBe('v5.channel.k8s.io');
    expect(result.channels.get(1)?.toString()).toBe('typed\nthe pod\n');
    expect(JSON.parse(result.channels.get(3)!.toString())).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: error executing command [sh -c cat; echo $WHO; exit 5], exit code 5',
      reason: 'NonZeroExitCode',
      details: {causes: [{reason: 'ExitCode', message: '5'}]},
    });
  });

  it('base64.channel.k8s.io: digits and base64, and no Status before v4', async () => {
    const ws = connect('/exec/default/web/app?command=echo&command=hi&stdout=1', ['base64.channel.k8s.io']);
    const result = await exchange(ws, () => {}, true);
    expect(result.protocol).toBe('base64.channel.k8s.io');
    expect(result.channels.get(1)?.toString()).toBe('hi\n');
    expect(result.channels.get(3)?.toString() ?? '').toBe('');
  });
});

describe('requests it cannot serve', () => {
  it('answers with the kubelet\'s text before any upgrade', async () => {
    expect(await post('/exec/default/web/app?command=true&stdout=1')).toEqual({status: 400, body: 'unable to upgrade: missing upgrade headers in request\n'});
    const unknownPod = connect('/exec/default/nope/app?command=true&stdout=1', ['v5.channel.k8s.io']);
    const refused = await new Promise<number>((resolve) => unknownPod.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(refused).toBe(404);
    const noContainer = connect('/exec/default/web/nope?command=true&stdout=1', ['v5.channel.k8s.io']);
    const body = await new Promise<string>((resolve) =>
      noContainer.on('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      }),
    );
    expect(body).toBe('500 container not found ("nope")');
  });
});

describe('/run', () => {
  it('runs the command once and answers its output', async () => {
    // Split on white space as upstream does: no shell, no quoting.
    expect(await post('/run/default/web/app?cmd=echo%20hello%20%20world')).toEqual({status: 200, body: 'hello world\n'});
    expect(await post('/run/default/web/app?cmd=false')).toEqual({status: 500, body: "command 'false' exited with 1: "});
    expect(await post('/run/default/web/app?cmd=printenv%20WHO')).toEqual({status: 200, body: 'the pod\n'});
    expect((await post('/run/default/nope/app?cmd=true')).status).toBe(404);
  });
});

describe('--streaming-connection-idle-timeout', () => {
  it('closes a connection without traffic, and keeps one with traffic open past it', async () => {
    const idle = connect('/exec/default/web/app?command=cat&stdin=1&stdout=1', ['v4.channel.k8s.io']);
    const busy = connect('/exec/default/web/app?command=cat&stdin=1&stdout=1', ['v5.channel.k8s.io']);
    let busyClosed = false;
    let timer: NodeJS.Timeout | undefined;
    const busyDone = exchange(busy, (open) => {
      timer = setInterval(() => open.send(Buffer.concat([Buffer.from([0]), Buffer.from('.')])), IDLE_MS / 4);
    }).then((r) => {
      busyClosed = true;
      return r;
    });
    const idleResult = await exchange(idle);
    expect(idleResult.closedAfterMs).toBeGreaterThanOrEqual(IDLE_MS - 50);
    // The busy connection has lived past the timeout that closed the idle one; traffic kept it.
    await new Promise((r) => setTimeout(r, IDLE_MS));
    expect(busyClosed).toBe(false);
    clearInterval(timer);
    busy.send(Buffer.from([255, 0]));
    const busyResult = await busyDone;
    expect(busyResult.channels.get(1)?.toString()).toMatch(/^\.+$/);
    expect(servers.streamingConnections).toBe(0);
  });
});

describe('a pod that is killed', () => {
  it('takes its exec processes with it; the client gets the exit', async () => {
    const {readdirSync, readFileSync} = await import('node:fs');
    const running = () =>
      readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'latin1') === 'sleep\u00003011\u0000';
        } catch {
          return false;
        }
      }).length;
    const ws = connect('/exec/default/web/app?command=sleep&command=3011&stdout=1', ['v5.channel.k8s.io']);
    const done = exchange(ws);
    const deadline = Date.now() + 10_000;
    while (running() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(running()).toBe(1);
    await runtime.killPod('uid-web', 0);
    const result = await done;
    expect(running()).toBe(0);
    expect(JSON.parse(result.channels.get(3)!.toString())).toMatchObject({reason: 'NonZeroExitCode', details: {causes: [{reason: 'ExitCode', message: '137'}]}});
    // The pod's container has ended: an exec now is refused before the upgrade, in containerd's words.
    const late = connect('/exec/default/web/app?command=true&stdout=1', ['v5.channel.k8s.io']);
    const refused = await new Promise<string>((resolve) =>
      late.on('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      }),
    );
    expect(refused).toBe('500 failed to exec in container: container is in CONTAINER_EXITED state');
  });
});
