/** `orch patch -i` against the server, in process: the prompt sees the server's dry-run result and decides. */
import {afterAll, beforeAll, expect, it} from '@jest/globals';
import {call, startTestApi, type TestApi} from '../helpers/memory-store.js';
import {completePatchOptions} from '../../src/cmd/patch/options.js';
import {runServerPatch} from '../../src/cmd/patch/server.js';
import {printerDependencies} from '../../src/cmd/patch/printing.js';

let api: TestApi;
beforeAll(async () => {
  // No orchconfig of the machine's user may add a namespace or credentials to this test.
  process.env.ORCHCONFIG = '/nonexistent/orch-test-config';
  api = await startTestApi();
  await call(api, 'POST', '/api/v1/namespaces/default/configmaps', {body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'settings'}, data: {a: '1'}}});
});
afterAll(() => api.close());

async function interactive(answer: boolean) {
  const o = completePatchOptions({server: api.url, interactive: true, type: 'merge', patch: '{"data":{"a":"2"}}', 'dry-run': 'none'}, ['cm', 'settings']);
  let stdout = '';
  const asked: string[] = [];
  const results = await runServerPatch(
    o,
    {
      stdout: (t) => void (stdout += t),
      stderr: () => undefined,
      confirm: async (name, diff) => {
        asked.push(name, diff);
        return answer;
      },
      colors: false,
    },
    printerDependencies,
  );
  return {stdout, asked, results};
}

it('-i shows the server-computed change and sends nothing when declined', async () => {
  const {stdout, asked, results} = await interactive(false);
  expect(asked[0]).toBe('configmap/settings');
  expect(asked[1]).toMatch(/^- {2}a: "1"$/m);
  expect(asked[1]).toMatch(/^\+ {2}a: "2"$/m);
  expect(stdout).toBe('configmap/settings not patched\n');
  expect(results[0].applied).toBe(false);
  expect((await call(api, 'GET', '/api/v1/namespaces/default/configmaps/settings')).body.data).toEqual({a: '1'});
});

it('-i sends the patch when accepted', async () => {
  const {stdout} = await interactive(true);
  expect(stdout).toBe('configmap/settings patched\n');
  expect((await call(api, 'GET', '/api/v1/namespaces/default/configmaps/settings')).body.data).toEqual({a: '2'});
});
