/**
 * The ABAC and Webhook authorizers on a real server, reached with real kubectl: an ABAC policy
 * file, and a SubjectAccessReview webhook served over TLS on loopback, chained as
 * `--authorization-mode=Webhook,ABAC`. Each failure path (a webhook that denies, answers garbage or
 * is down; a malformed policy file) refuses the request or the start.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, freePort, kubectl, readAdminOrchconfig, startApiServer, writeClientOrchconfig} from '../helpers/apiserver.js';
import {runOrch} from '../helpers/run-orch.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

interface Review {
  apiVersion: string;
  spec: {user: string; group?: string[]; groups?: string[]; resourceAttributes?: {resource: string; verb: string}; nonResourceAttributes?: unknown};
}

describe('ABAC and Webhook authorizers', () => {
  let dir: string;
  let api: InProcessServer;
  let hook: Server;
  const reviews: Review[] = [];
  let kubeconfigOf: (token: string) => string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-authz-'));
    const ca = await generateCa();
    const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
    // The webhook's policy: carol may read configmaps, dave is denied everything, erin gets garbage.
    hook = createServer({key: serving.keyPem, cert: serving.certPem}, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        reviews.push(review);
        const user = review.spec.user;
        if (user === 'erin') return res.end('<html>proxy error</html>');
        const allowed = user === 'carol' && review.spec.resourceAttributes?.resource === 'configmaps';
        const status = user === 'dave' ? {allowed: false, denied: true, reason: 'dave is on leave'} : {allowed, reason: allowed ? 'carol reads configmaps' : ''};
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status}));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const port = (hook.address() as {port: number}).port;
    const webhookConfig = writeClientOrchconfig(join(dir, 'authz-webhook.yaml'), {server: `https://127.0.0.1:${port}/authorize`, caPem: ca.certPem});
    const policyFile = join(dir, 'abac.jsonl');
    writeFileSync(
      policyFile,
      [
        '# alice reads pods everywhere; bob (an unversioned line) may do anything',
        JSON.stringify({apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec: {user: 'alice', namespace: '*', resource: 'pods', apiGroup: '*', readonly: true}}),
        JSON.stringify({apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec: {user: '*', nonResourcePath: '/api*', readonly: true}}),
        '{"user":"bob"}',
        '',
      ].join('\n'),
    );
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, ['alice-token,alice,1', 'bob-token,bob,2', 'carol-token,carol,3', 'dave-token,dave,4', 'erin-token,erin,5', ''].join('\n'));
    api = await startApiServer({
      engine: 'sqlite',
      config: {
        anonymousAuth: false,
        tokenAuthFile: tokenFile,
        authorizationModes: ['Webhook', 'ABAC'],
        authorizationPolicyFile: policyFile,
        authorizationWebhookConfigFile: webhookConfig,
        authorizationWebhookVersion: 'v1beta1',
      },
    });
    const admin = readAdminOrchconfig(api.orchconfigPath);
    kubeconfigOf = (token: string) => writeClientOrchconfig(join(dir, `${token}.orchconfig`), {server: admin.server, caPem: admin.caPem, token});
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    await new Promise<void>((resolve) => (hook ? hook.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('ABAC allows what a policy line allows, past a webhook with no opinion', async () => {
    const alice = kubeconfigOf('alice-token');
    const read = await kubectl(alice, ['get', 'pods', '-n', 'kube-x']);
    expect(read.stderr).toContain('No resources found in kube-x namespace.');
    expect(read.code).toBe(0);
    const write = await kubectl(alice, ['create', 'configmap', 'by-alice']);
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default": No policy matched.');
    const bob = await kubectl(kubeconfigOf('bob-token'), ['create', 'configmap', 'by-bob']);
    expect(bob.stdout).toContain('configmap/by-bob created');
  });

  it('sends v1beta1 SubjectAccessReviews (with `group`) and follows the webhook\'s answer', async () => {
    const carol = await kubectl(kubeconfigOf('carol-token'), ['get', 'configmap', 'by-bob', '-o', 'name']);
    expect(carol.stdout.trim()).toBe('configmap/by-bob');
    const review = reviews.find((r) => r.spec.user === 'carol' && r.spec.resourceAttributes?.resource === 'configmaps');
    expect(review?.apiVersion).toBe('authorization.orch.io/v1beta1');
    expect(review?.spec.group).toEqual(['system:authenticated']);
    expect(review?.spec.groups).toBeUndefined();
    const carolPods = await kubectl(kubeconfigOf('carol-token'), ['get', 'pods']);
    expect(carolPods.stderr).toContain('User "carol" cannot list resource "pods"');
  });

  it('a Deny from the webhook stops the chain, with its reason', async () => {
    // dave would be allowed by the ABAC line for everyone's /api* paths, but the webhook denies first.
    const dave = await kubectl(kubeconfigOf('dave-token'), ['get', '--raw', '/api']);
    expect(dave.code).not.toBe(0);
    expect(dave.stderr).toContain('Error from server (Forbidden): forbidden: User "dave" cannot get path "/api": dave is on leave');
  });

  it('a webhook answering garbage fails the request with a 500, never allows it', async () => {
    const erin = await kubectl(kubeconfigOf('erin-token'), ['get', 'configmaps'], {timeoutMs: 30_000});
    expect(erin.code).not.toBe(0);
    expect(erin.stderr).toContain('Error from server (InternalError)');
    expect(erin.stderr).not.toContain('by-bob');
  }, 40_000);

  it('stops the start on a malformed policy line, naming the file and the line', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"user":"alice"}\n# fine\n{"user": alice}\n');
    const run = runOrch(['apiserver', '--data-dir', join(dir, 'bad-start'), '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1', '--authorization-mode', 'ABAC', '--authorization-policy-file', bad]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`error reading policy file ${bad}, line 3: {"user": alice}`);
  });

  it('stops the start when the policy file cannot be read, naming the option and the file', async () => {
    const missing = join(dir, 'no-such-policy.jsonl');
    const run = runOrch(['apiserver', '--data-dir', join(dir, 'unreadable'), '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1', '--authorization-mode', 'ABAC', '--authorization-policy-file', missing]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`--authorization-policy-file: cannot read ${missing}`);
  });

  it('refuses an unknown webhook version at start with the accepted values', async () => {
    const run = runOrch([
      'apiserver', '--data-dir', join(dir, 'bad-version'), '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1',
      '--authorization-mode', 'Webhook', '--authorization-webhook-config-file', join(dir, 'authz-webhook.yaml'), '--authorization-webhook-version', 'v2',
    ]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/invalid value "v2" for --authorization-webhook-version.*v1, v1beta1|--authorization-webhook-version: invalid value "v2": accepted values are v1, v1beta1/);
  });
});
