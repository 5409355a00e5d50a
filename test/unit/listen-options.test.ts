import {describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:net';
import {listenOptions, runtimeHasReusePort} from '../../src/daemons/shared/serving/listen-options.js';

const listen = (server: Server, options: object) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => resolve((server.address() as {port: number}).port));
  });

describe('listenOptions (--permit-port-sharing)', () => {
  it('binds plainly without port sharing', () => {
    expect(listenOptions(6443, '127.0.0.1', false)).toEqual({port: 6443, host: '127.0.0.1'});
  });

  it('knows which runtimes have net.Server reusePort', () => {
    expect(runtimeHasReusePort('20.20.2')).toBe(false);
    expect(runtimeHasReusePort('22.11.0')).toBe(false);
    expect(runtimeHasReusePort('22.12.0')).toBe(true);
    expect(runtimeHasReusePort('23.0.0')).toBe(false);
    expect(runtimeHasReusePort('23.1.0')).toBe(true);
    expect(runtimeHasReusePort('24.0.0')).toBe(true);
  });

  it('binds a shared socket (SO_REUSEPORT) on this runtime: two listeners on one port, a plain one refused', async () => {
    const a = createServer();
    const b = createServer();
    const plain = createServer();
    try {
      const port = await listen(a, listenOptions(0, '127.0.0.1', true));
      expect(await listen(b, listenOptions(port, '127.0.0.1', true))).toBe(port);
      await expect(listen(plain, {port, host: '127.0.0.1'})).rejects.toThrow(/EADDRINUSE/);
    } finally {
      for (const s of [a, b, plain]) if (s.listening) s.close();
    }
  });

  it("words the addon's bind failures as Node's listen errors, naming the address", () => {
    const failing = (text: string) => () => {
      throw new Error(text);
    };
    expect(() => listenOptions(6443, '127.0.0.1', true, failing('Address already in use'))).toThrow('listen EADDRINUSE: address already in use 127.0.0.1:6443');
    expect(() => listenOptions(6443, '::1', true, failing('Address already in use'))).toThrow('listen EADDRINUSE: address already in use [::1]:6443');
    expect(() => listenOptions(80, '10.0.0.1', true, failing('Cannot assign requested address'))).toThrow('listen EADDRNOTAVAIL: address not available 10.0.0.1:80');
  });

  it('without a host, binds the IPv6 any-address, or IPv4 where IPv6 is unavailable', () => {
    const asked: string[] = [];
    const binder = (port: number, host: string) => {
      asked.push(host);
      if (host === '::') throw new Error('Address family not supported by protocol');
      return 42;
    };
    expect(listenOptions(6443, undefined, true, binder)).toEqual({fd: 42});
    expect(asked).toEqual(['::', '0.0.0.0']);
  });
});
