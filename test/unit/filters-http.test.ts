import {afterEach, describe, expect, it} from '@jest/globals';
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http';
import * as http2 from 'node:http2';
import type {AddressInfo} from 'node:net';
import {composeFilters, type RequestLike, type ResponseLike} from '../../src/daemons/shared/http/http-types.js';
import {maxInFlightFilter} from '../../src/daemons/apiserver/filters/max-in-flight.js';
import {requestTimeoutFilter} from '../../src/daemons/apiserver/filters/timeout.js';
import {goawayFilter} from '../../src/daemons/apiserver/filters/goaway.js';
import {ShutdownLifecycle} from '../../src/daemons/apiserver/lifecycle/shutdown.js';

/** A handler that answers after `?delay=` ms. */
function slowHandler(req: RequestLike, res: ResponseLike): void {
  const delay = Number(new URL(req.url!, 'http://x').searchParams.get('delay') ?? 0);
  setTimeout(() => {
    res.setHeader('Content-Type', 'application/json');
    res.end('{"kind":"PodList"}');
  }, delay);
}

describe('filters on real servers', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const server: Server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    cleanups.push(() => server.closeAllConnections());
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('times out a slow request with 504 and frees its in-flight slot', async () => {
    const maxInFlight = maxInFlightFilter({maxRequestsInFlight: 1, maxMutatingRequestsInFlight: 1});
    const chain = composeFilters([maxInFlight, requestTimeoutFilter({requestTimeoutMs: 60_000})], slowHandler);
    const base = await listen((req, res) => chain(req, res));

    const slow = await fetch(`${base}/api/v1/pods?timeout=50ms&delay=300`);
    expect(slow.status).toBe(504);
    expect(((await slow.json()) as {reason: string}).reason).toBe('Timeout');
    const fast = await fetch(`${base}/api/v1/pods`);
    expect([fast.status, await fast.text()]).toEqual([200, '{"kind":"PodList"}']);
    expect(maxInFlight.inFlight).toEqual({readOnly: 0, mutating: 0});
  });

  it('closes HTTP/1 connections of requests rejected while draining with retry-after', async () => {
    const lifecycle = new ShutdownLifecycle({sendRetryAfter: true, server: {closeListeners: () => {}}, exit: () => {}});
    const chain = composeFilters([lifecycle.filter], slowHandler);
    const base = await listen((req, res) => chain(req, res));
    lifecycle.initiateShutdown();
    await lifecycle.signaled('NotAcceptingNewRequest');
    const res = await fetch(`${base}/api/v1/pods`);
    expect([res.status, res.headers.get('retry-after'), res.headers.get('connection'), await res.text()]).toEqual([
      429,
      '5',
      'close',
      'The apiserver is shutting down, please try again later.\n',
    ]);
    await lifecycle.done;
  });

  it('sends GOAWAY on HTTP/2 instead of a Connection header', async () => {
    const lifecycle = new ShutdownLifecycle({sendRetryAfter: true, server: {closeListeners: () => {}}, exit: () => {}});
    const chain = composeFilters([goawayFilter({chance: 0.02, random: () => 0}), lifecycle.filter], slowHandler);
    const server = http2.createServer((req, res) => chain(req as never, res as never));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    cleanups.push(() => void client.destroy());
    const goaway = new Promise<void>((resolve) => client.once('goaway', () => resolve()));

    lifecycle.initiateShutdown();
    await lifecycle.signaled('NotAcceptingNewRequest');
    const stream = client.request({':path': '/api/v1/pods'});
    const [status, body] = await new Promise<[number, string]>((resolve) => {
      let status = 0;
      let body = '';
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (body += chunk));
      stream.on('end', () => resolve([status, body]));
    });
    expect([status, body]).toEqual([429, 'The apiserver is shutting down, please try again later.\n']);
    await goaway;
    await lifecycle.done;
  });
});
