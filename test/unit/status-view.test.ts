/** The live view of `orch status --watch`: what it shows from each round's report, and that it follows new rounds. */
import {describe, expect, it} from '@jest/globals';
import {createElement} from 'react';
import {render} from 'ink-testing-library';
import {StatusView} from '../../src/ui/status-view.js';
import {StateEmitter} from '../../src/ui/state-emitter.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {buildReport, type ComponentStatus} from '../../src/cmd/status/report.js';
import type {StatusSnapshot} from '../../src/cmd/status/main.js';

const T0 = Date.UTC(2024, 4, 1, 10, 0, 0);
const tick = () => new Promise((r) => setTimeout(r, 30));
const plain = (frame: string | undefined) => (frame ?? '').replace(/\x1b\[[0-9;]*m/g, '');

const apiserver = (readyOk: boolean): ComponentStatus => ({
  name: 'apiserver',
  url: 'https://127.0.0.1:6443',
  reachable: true,
  ready: readyOk,
  livez: {path: '/livez?verbose', httpStatus: 200, ok: true, checks: [{name: 'ping', ok: true}], warnings: []},
  readyz: {
    path: '/readyz?verbose',
    httpStatus: readyOk ? 200 : 500,
    ok: readyOk,
    checks: [{name: 'ping', ok: true}, readyOk ? {name: 'shutdown', ok: true} : {name: 'shutdown', ok: false, reason: 'process is shutting down'}],
    warnings: [],
  },
});
const agentDown: ComponentStatus = {name: 'agent', url: 'https://127.0.0.1:10250', reachable: false, ready: false, livez: null, readyz: null, error: 'dial tcp 127.0.0.1:10250: connect: connection refused'};

function setup() {
  const clock = new FakeClock(T0);
  const emitter = new StateEmitter<StatusSnapshot>({clock});
  const view = render(createElement(StatusView, {emitter, clock}));
  return {clock, emitter, view};
}

describe('StatusView', () => {
  it('says it is checking before the first round', () => {
    const {view} = setup();
    expect(plain(view.lastFrame())).toContain('Checking…');
    view.unmount();
  });

  it('shows the components, the failing checks with reasons, the leader and the verdict', async () => {
    const {emitter, view} = setup();
    emitter.update({
      at: T0,
      report: buildReport([apiserver(false), agentDown], {holder: 'cp-1_6f1c2a', renewTime: '2024-05-01T09:59:57Z', transitions: 2, leaseDurationSeconds: 15}),
    });
    await tick();
    const frame = plain(view.lastFrame());
    expect(frame).toMatch(/apiserver\s+https:\/\/127\.0\.0\.1:6443\s+ok\s+failed\s+shutdown/);
    expect(frame).toMatch(/agent\s+https:\/\/127\.0\.0\.1:10250\s+-\s+-/);
    expect(frame).toContain('✗ agent dial tcp 127.0.0.1:10250: connect: connection refused');
    expect(frame).toContain('✗ apiserver shutdown process is shutting down');
    expect(frame).toContain('Leader: cp-1_6f1c2a (renewed 3s ago, 2 transitions)');
    expect(frame).toContain('Ready: no');
    view.unmount();
  });

  it('follows the next round and keeps ages moving between rounds', async () => {
    const {clock, emitter, view} = setup();
    emitter.update({at: T0, report: buildReport([apiserver(false)], null, 'lease orch-system/orch-controller-manager not found')});
    await tick();
    expect(plain(view.lastFrame())).toContain('Leader: none (lease orch-system/orch-controller-manager not found)');
    await clock.advance(1000);
    emitter.update({at: T0 + 1000, report: buildReport([apiserver(true)], null)});
    await tick();
    let frame = plain(view.lastFrame());
    expect(frame).toContain('Ready: yes');
    expect(frame).not.toContain('✗');
    await clock.advance(3000);
    await tick();
    frame = plain(view.lastFrame());
    expect(frame).toContain('checked 3s ago');
    view.unmount();
  });
});
