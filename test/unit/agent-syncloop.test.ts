import {describe, expect, it} from '@jest/globals';
import {syncLoopProblem} from '../../src/daemons/agent/agent.js';

describe("the agent's syncloop health check", () => {
  it.each([
    [undefined, 0, 60_000, undefined],
    [undefined, 0, 121_000, 'sync loop is not running: last cycle 121s ago (threshold 120s)'],
    [100_000, 0, 200_000, undefined],
    [100_000, 0, 230_000, 'sync loop is not running: last cycle 130s ago (threshold 120s)'],
  ])('last cycle %j, started %j, now %j', (last, started, now, expected) => {
    expect(syncLoopProblem(last, started, now)).toBe(expected);
  });
});
