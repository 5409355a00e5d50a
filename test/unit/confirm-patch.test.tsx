import {describe, expect, it} from '@jest/globals';
import {render} from 'ink-testing-library';
import {ConfirmPatch} from '../../src/ui/confirm-patch.js';

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
