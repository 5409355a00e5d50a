import {afterAll, describe, expect, it} from '@jest/globals';
import {loadForTerminal} from '../../src/lib/load-for-terminal.js';

// As on a CI runner: CI is set, yet the prompt is on a terminal and must be drawn as it happens
// (Ink, loaded plainly, would hold every frame back until it unmounts).
const ciBefore = process.env.CI;
process.env.CI = 'true';
afterAll(() => {
  if (ciBefore === undefined) delete process.env.CI;
  else process.env.CI = ciBefore;
});
// One after the other: jest's ESM loader fails on two dynamic imports that share modules at once.
const {render} = await loadForTerminal(() => import('ink-testing-library'));
const {ConfirmPatch} = await loadForTerminal(() => import('../../src/ui/confirm-patch.js'));

const diff = '--- a/pod/web\n+++ b/pod/web\n@@ -1 +1 @@\n-    app: web\n+    app: api\n';
const tick = () => new Promise((r) => setTimeout(r, 20));

describe('the --interactive prompt', () => {
  it('shows the diff and the question', () => {
    const {lastFrame, unmount} = render(<ConfirmPatch name="pod/web" diff={diff} onAnswer={() => {}} />);
    const frame = lastFrame() ?? '';
    expect(frame).toContain('+    app: api');
    expect(frame).toContain('-    app: web');
    expect(frame).toContain('Apply this patch to pod/web? [y/N]');
    unmount();
  });

  it.each([
    ['y', true],
    ['Y', true],
    ['n', false],
    ['\r', false],
    ['x', undefined],
  ])('answers %j with %j', async (key, expected) => {
    const answers: boolean[] = [];
    const {stdin, lastFrame, unmount} = render(<ConfirmPatch name="pod/web" diff={diff} onAnswer={(a) => answers.push(a)} />);
    await tick();
    stdin.write(key);
    await tick();
    expect(answers).toEqual(expected === undefined ? [] : [expected]);
    if (expected !== undefined) expect(lastFrame()).toContain(expected ? 'yes' : 'no');
    unmount();
  });
});
