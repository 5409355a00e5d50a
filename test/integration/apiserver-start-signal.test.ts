/**
 * SIGTERM while `orch apiserver` starts: the signal is held until the server serves, then runs the
 * shutdown sequence, and the process exits 0. Before, a signal in the gap between listening and
 * installing the handlers killed the process by the signal, half started.
 */
import {describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {EventEmitter} from 'node:events';
import {existsSync, mkdtempSync, rmSync} from 'node:fs';
import {connect} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {runApiServer} from '../../src/cmd/apiserver/run.js';
import {configureKlog} from '../../src/lib/klog.js';
import {testConfig} from '../helpers/apiserver.js';
import {repoRoot as root} from '../helpers/run-orch.js';

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

describe('a signal during the start', () => {
  it('is held until the server serves, then stops it through the shutdown sequence', async () => {
    configureKlog({out: () => undefined});
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-start-signal-'));
    const signals = new EventEmitter();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const timersBefore = timers();
    try {
      const config = testConfig(dataDir, 'sqlite');
      const running = runApiServer(config, false, signals as never);
      // The start has only begun: the signal lands before anything listens.
      signals.emit('SIGTERM');
      await running;
      // It did start (the admin orchconfig is written once it serves), then let its port go.
      expect(existsSync(config.orchconfigPath)).toBe(true);
      expect(signals.listenerCount('SIGTERM')).toBe(0);
      expect(signals.listenerCount('SIGINT')).toBe(0);
      // Nothing of it keeps running: post-start hooks cut short by the stop end, and their
      // retries (every second, on a closed store) with them.
      await new Promise((r) => setTimeout(r, 1500));
      expect(timers()).toBeLessThanOrEqual(timersBefore);
    } finally {
      rmSync(dataDir, {recursive: true, force: true});
    }
  }, 60_000);

  it('`orch apiserver` sent SIGTERM at its first log line exits 0, not by the signal', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-start-signal-'));
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, [join(root, 'bin', 'run.js'), 'apiserver', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1'], {stdio: ['ignore', 'pipe', 'pipe']});
    let output = '';
    let signalled = false;
    const onOutput = (chunk: Buffer) => {
      output += chunk.toString();
      if (!signalled) {
        signalled = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    try {
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
      expect({code, signal, signalled}).toEqual({code: 0, signal: null, signalled: true});
      expect(output).toContain('Stopped');
      expect(await refused(port)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, {recursive: true, force: true});
    }
  }, 60_000);
});
