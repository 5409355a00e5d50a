/**
 * `--authorization-config` on a real server with real kubectl: a Webhook authorizer asked only for
 * the namespace its match condition names, a second webhook that is down (failurePolicy NoOpinion,
 * so RBAC after it still decides), RBAC last; then the file changes and the running server takes
 * the new chain, and keeps it when a later change is invalid.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, kubectl, readAdminOrchconfig, startApiServer, writeClientOrchconfig} from '../helpers/apiserver.js';
import {runOrch} from '../helpers/run-orch.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

describe('--authorization-config', () => {
  let dir: string;
  let api: InProcessServer;
  let hook: Server;
  const asked: string[] = [];
  let configFile: string;
  let hookConfig: string;
  let downConfig: string;
  let kubeconfigOf: (token: string) => string;

  const authorizationConfig = (withPolicy: boolean) =>
    JSON.stringify({
      apiVersion: 'apiserver.config.orch.io/v1',
      kind: 'AuthorizationConfiguration',
      authorizers: [
        ...(withPolicy
          ? [{
              type: 'Webhook', name: 'policy',
              webhook: {
                timeout: '3s', subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion',
                authorizedTTL: '1s', unauthorizedTTL: '1s', connectionInfo: {type: 'KubeConfigFile', kubeConfigFile: hookConfig},
                matchConditions: [{expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'webhooked'"}],
              },
            }]
          : []),
        {
          type: 'Webhook', name: 'down',
          webhook: {timeout: '1s', subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion', authorizedTTL: '1s', unauthorizedTTL: '1s', connectionInfo: {type: 'KubeConfigFile', kubeConfigFile: downConfig}},
        },
        {type: 'RBAC', name: 'rbac'},
      ],
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-authz-config-'));
    const ca = await generateCa();
    const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
    hook = createServer({key: serving.keyPem, cert: serving.certPem}, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body);
        asked.push(`${review.spec.user} ${review.spec.resourceAttributes?.namespace ?? ''}`);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status: {allowed: review.spec.user === 'carol'}}));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    hookConfig = writeClientOrchconfig(join(dir, 'policy.orchconfig'), {server: `https://127.0.0.1:${(hook.address() as {port: number}).port}/authorize`, caPem: ca.certPem});
    downConfig = writeClientOrchconfig(join(dir, 'down.orchconfig'), {server: 'https://127.0.0.1:1/authorize', caPem: ca.certPem});
    configFile = join(dir, 'authz.json');
    writeFileSync(configFile, authorizationConfig(true));
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, 'carol-token,carol,1\ndave-token,dave,2\n');
    api = await startApiServer({
      engine: 'sqlite',
      config: {anonymousAuth: false, tokenAuthFile: tokenFile, authorizationConfigFile: configFile, authorizationConfigReloadIntervalMs: 200},
    });
    const admin = readAdminOrchconfig(api.orchconfigPath);
    kubeconfigOf = (token: string) => writeClientOrchconfig(join(dir, `${token}.orchconfig`), {server: admin.server, caPem: admin.caPem, token});
    const setup = [
      {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'webhooked'}},
      {apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'dave-view', namespace: 'default'},
        roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'}, subjects: [{apiGroup: 'rbac.orch.io', kind: 'User', name: 'dave'}]},
    ];
    expect((await kubectl(api.orchconfigPath, ['create', '-f', '-'], {input: setup.map((o) => JSON.stringify(o)).join('\n')})).code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    await new Promise<void>((resolve) => (hook ? hook.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('asks a webhook only where its match conditions hold', async () => {
    const allowed = await kubectl(kubeconfigOf('carol-token'), ['get', 'configmaps', '-n', 'webhooked']);
    expect(allowed.code).toBe(0);
    expect(asked).toContain('carol webhooked');
    const elsewhere = await kubectl(kubeconfigOf('carol-token'), ['get', 'configmaps', '-n', 'default']);
    expect(elsewhere.code).not.toBe(0);
    expect(asked).not.toContain('carol default');
  }, 30_000);

  it('lets RBAC decide after a webhook that is down under failurePolicy NoOpinion', async () => {
    const dave = await kubectl(kubeconfigOf('dave-token'), ['get', 'configmaps', '-n', 'default']);
    expect(dave.stderr).toContain('No resources found in default namespace.');
    expect(dave.code).toBe(0);
  }, 30_000);

  it('reloads a changed file, and keeps running on an invalid one', async () => {
    writeFileSync(configFile, authorizationConfig(false));
    const deadline = Date.now() + 10_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = (await kubectl(kubeconfigOf('carol-token'), ['get', 'configmaps', '-n', 'webhooked'])).code !== 0;
      if (!refused) await new Promise((r) => setTimeout(r, 300));
    }
    expect(refused).toBe(true);
    writeFileSync(configFile, '{"kind": "AuthorizationConfiguration", "authorizers": []}');
    await new Promise((r) => setTimeout(r, 800));
    expect((await kubectl(kubeconfigOf('dave-token'), ['get', 'configmaps', '-n', 'default'])).code).toBe(0);
  }, 30_000);

  it('stops the start on an invalid file, naming the field', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({apiVersion: 'apiserver.config.orch.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{type: 'Webhook', name: 'w'}]}));
    const run = runOrch(['apiserver', '--data-dir', join(dir, 'bad-start'), '--bind-address', '127.0.0.1', '--secure-port', '16444', '--authorization-config', bad]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`--authorization-config ${bad}: authorizers[0].webhook: Required value: required when type=Webhook`);
  });
});
