/**
 * The pure parts of the agent's pod sources: static pod UIDs and defaults, manifest decoding and
 * its errors, the PodConfig merger's operations, and the mirror pod plan.
 */
import { describe, expect, it } from '@jest/globals';
import {
  applyStaticDefaults,
  configHashAnnotation,
  configMirrorAnnotation,
  configSeenAnnotation,
  configSourceAnnotation,
  decodeManifestFile,
  decodeManifestUrlBody,
  fnv1a128Hex,
  manifestNames,
  mirrorPodOf,
  planMirrorPods,
  PodConfig,
  splitMirrorPods,
  staticPodUid,
  type PodUpdate,
  type SourcePod,
} from '../../src/daemons/agent/sources/index.js';

const manifest = (name: string, extra = '') => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n${extra}spec:\n  containers:\n  - name: main\n    image: none\n    command: [sleep, "100"]\n`;

describe('static pod UID and defaults', () => {
  it('hashes with 128-bit FNV-1a (published test vectors)', () => {
    expect(fnv1a128Hex('')).toBe('6c62272e07bb014262b821756295c58d');
    expect(fnv1a128Hex('a')).toBe('d228cb696f1a8caf78912b704e4a8964');
  });

  it('gives the same manifest the same UID whatever its key order, and another UID per node, path, URL or content', () => {
    const pod = decodeManifestFile(manifest('web'), '/etc/pods/web.yaml', 'node-a');
    const again = decodeManifestFile(`{"kind":"Pod","spec":{"containers":[{"command":["sleep","100"],"image":"none","name":"main"}]},"metadata":{"name":"web"},"apiVersion":"v1"}`, '/etc/pods/web.yaml', 'node-a');
    expect(again.metadata.uid).toBe(pod.metadata.uid);
    expect(pod.metadata.uid).toMatch(/^[0-9a-f]{32}$/);
    const others = [
      decodeManifestFile(manifest('web'), '/etc/pods/web.yaml', 'node-b'),
      decodeManifestFile(manifest('web'), '/etc/pods/other.yaml', 'node-a'),
      decodeManifestFile(manifest('web', '  labels: {a: b}\n'), '/etc/pods/web.yaml', 'node-a'),
      decodeManifestUrlBody(manifest('web'), 'http://h/pods', 'node-a')[0]!,
    ];
    expect(new Set([pod, ...others].map((p) => p.metadata.uid)).size).toBe(5);
  });

  it('keeps a UID the manifest sets', () => {
    expect(decodeManifestFile(manifest('web', '  uid: fixed-uid\n'), '/p', 'n').metadata.uid).toBe('fixed-uid');
  });

  it('applies the upstream defaults: name-node, default namespace, node binding, hash, toleration, Pending', () => {
    const pod = decodeManifestFile(manifest('web'), '/etc/pods/web.yaml', 'Node-A');
    expect(pod.metadata).toMatchObject({ name: 'web-node-a', namespace: 'default', annotations: { [configHashAnnotation()]: pod.metadata.uid } });
    expect(pod.spec.nodeName).toBe('Node-A');
    expect(pod.spec.tolerations).toEqual([{ operator: 'Exists', effect: 'NoExecute' }]);
    expect(pod.status).toEqual({ phase: 'Pending' });
  });

  it('adds the NoExecute toleration to file pods only, replacing an identical one', () => {
    const raw: SourcePod = { metadata: { name: 'p', namespace: 'kube' }, spec: { tolerations: [{ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }, { key: 'k', operator: 'Exists' }] } };
    expect(applyStaticDefaults(raw, { kind: 'file', path: '/f' }, 'n').spec.tolerations).toEqual([{ operator: 'Exists', effect: 'NoExecute' }, { key: 'k', operator: 'Exists' }]);
    expect(applyStaticDefaults(raw, { kind: 'http', url: 'http://x' }, 'n').spec.tolerations).toEqual(raw.spec.tolerations);
    expect(applyStaticDefaults(raw, { kind: 'file', path: '/f' }, 'n').metadata.namespace).toBe('kube');
  });

  it('computes the UID before the defaults, over the manifest plus where it came from', () => {
    const raw: SourcePod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } };
    expect(applyStaticDefaults(raw, { kind: 'file', path: '/f' }, 'n').metadata.uid).toBe(staticPodUid(raw, { kind: 'file', path: '/f' }, 'n'));
    expect(staticPodUid(raw, { kind: 'file', path: '/f' }, 'n')).toBe(fnv1a128Hex('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}host:nfile:/f'));
  });
});

describe('manifest decoding', () => {
  it.each([
    ['not YAML', 'a: [b', /error converting YAML to JSON/],
    ['no kind', 'apiVersion: v1\nmetadata: {name: x}\n', /Object 'Kind' is missing/],
    ['no apiVersion', 'kind: Pod\nmetadata: {name: x}\n', /Object 'apiVersion' is missing/],
    ['another version', 'apiVersion: v2\nkind: Pod\nmetadata: {name: x}\n', /no kind "Pod" is registered for version "v2"/],
    ['a list in a file', 'apiVersion: v1\nkind: PodList\nitems: []\n', /invalid pod: expected a single Pod, got kind "PodList"/],
    ['no name', 'apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c, image: i}]}\n', /^invalid pod: name is needed for the pod$/],
    ['no containers', 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {}\n', /invalid pod: \[spec.containers: Required value\]/],
    ['a container without image', 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n', /spec.containers\[0\].image: Required value/],
    ['a bad name', 'apiVersion: v1\nkind: Pod\nmetadata: {name: X_Y}\nspec: {containers: [{name: c, image: i}]}\n', /metadata.name: Invalid value: "X_Y-n"/],
    ['a secret', manifest('x').replace('    command', '    env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n    command'), /^static pods may not reference secrets$/],
    ['a config map volume', manifest('x') + '  volumes: [{name: v, configMap: {name: c}}]\n', /^static pods may not reference configmaps$/],
    ['a service account', manifest('x') + '  serviceAccountName: sa\n', /^static pods may not reference serviceaccounts$/],
    ['a ClusterTrustBundle', manifest('x') + '  volumes: [{name: v, projected: {sources: [{clusterTrustBundle: {name: b, path: p}}]}}]\n', /ClusterTrustBundle projected volume sources/],
    ['resource claims', manifest('x') + '  resourceClaims: [{name: r}]\n', /static pods may not use ResourceClaims/],
  ])('refuses a file with %s', (_what, data, message) => {
    expect(() => decodeManifestFile(data, '/p', 'n')).toThrow(message);
  });

  it('reads a URL body as one pod or as a PodList', () => {
    expect(decodeManifestUrlBody(manifest('one'), 'http://h', 'n').map((p) => p.metadata.name)).toEqual(['one-n']);
    const list = JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: ['a', 'b'].map((name) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'i' }] } })) });
    expect(decodeManifestUrlBody(list, 'http://h', 'n').map((p) => p.metadata.name)).toEqual(['a-n', 'b-n']);
    expect(() => decodeManifestUrlBody('apiVersion: v1\nkind: Service\n', 'http://h', 'n')).toThrow(/couldn't parse as a single pod or as a pod list/);
  });

  it('lists only names not starting with a dot, sorted', () => {
    expect(manifestNames(['b.yaml', '.hidden.yaml', 'a.json', '.swp', 'c'])).toEqual(['a.json', 'b.yaml', 'c']);
  });
});

describe('PodConfig merger', () => {
  const apiPod = (uid: string, name: string, extra: Partial<SourcePod['metadata']> = {}, spec: Record<string, unknown> = { containers: [{ name: 'c', image: 'i' }] }): SourcePod => ({
    metadata: { uid, name, namespace: 'default', ...extra },
    spec,
  });
  const setup = () => {
    const updates: PodUpdate[] = [];
    let now = 0;
    const config = new PodConfig({ listener: (u) => updates.push(u), now: () => new Date(Date.UTC(2024, 0, 1) + now++ * 1000) });
    const ops = () => updates.splice(0).map((u) => `${u.op}:${u.source}:${u.pods.map((p) => p.metadata.name).join(',')}`);
    return { config, updates, ops };
  };

  it('turns successive sets into REMOVE, ADD, UPDATE, DELETE and RECONCILE, in that order', () => {
    const { config, ops, updates } = setup();
    config.set('api', [apiPod('1', 'a'), apiPod('2', 'b'), apiPod('3', 'c')]);
    expect(ops()).toEqual(['ADD:api:a,b,c']);
    config.set('api', [apiPod('1', 'a'), apiPod('2', 'b'), apiPod('3', 'c')]);
    expect(ops()).toEqual([]);
    config.set('api', [
      apiPod('1', 'a', { labels: { changed: 'yes' } }),
      { ...apiPod('2', 'b'), status: { phase: 'Running' } },
      apiPod('4', 'd'),
    ]);
    expect(ops()).toEqual(['REMOVE:api:c', 'ADD:api:d', 'UPDATE:api:a', 'RECONCILE:api:b']);
    config.set('api', [apiPod('1', 'a', { labels: { changed: 'yes' }, deletionTimestamp: '2024-01-01T00:00:00Z' }), apiPod('4', 'd')]);
    expect(ops()).toEqual(['REMOVE:api:b', 'DELETE:api:a']);
    expect(updates).toEqual([]);
  });

  it('records the source and the first-seen time, which later updates keep', () => {
    const { config, updates } = setup();
    config.set('file', [apiPod('1', 'a')]);
    const added = updates[0]!.pods[0]!.metadata.annotations!;
    expect(added[configSourceAnnotation()]).toBe('file');
    expect(added[configSeenAnnotation()]).toBe('2024-01-01T00:00:00.000Z');
    config.set('file', [apiPod('1', 'a', { annotations: { note: 'x' } })]);
    expect(updates[1]!.op).toBe('UPDATE');
    expect(updates[1]!.pods[0]!.metadata.annotations).toEqual({ note: 'x', [configSourceAnnotation()]: 'file', [configSeenAnnotation()]: '2024-01-01T00:00:00.000Z' });
  });

  it('sends an empty ADD for the first set of a source that brings nothing, and tracks which sources were seen', () => {
    const { config, ops } = setup();
    expect(config.seenAllSources(['file', 'api'])).toBe(false);
    config.set('file', []);
    expect(ops()).toEqual(['ADD:file:']);
    config.set('file', []);
    expect(ops()).toEqual([]);
    config.set('api', [apiPod('1', 'a')]);
    expect(config.seenAllSources(['file', 'api'])).toBe(true);
  });

  it('keeps each source its own set, and drops a second pod with the same name in one source', () => {
    const problems: string[] = [];
    const updates: PodUpdate[] = [];
    const quiet = { info() {}, warning() {}, error() {}, v: () => ({ enabled: false, info() {} }) };
    const config = new PodConfig({ listener: (u) => updates.push(u), onProblem: (p) => problems.push(p.message), logger: quiet });
    config.set('file', [apiPod('1', 'a'), apiPod('2', 'a')]);
    config.set('http', [apiPod('3', 'h')]);
    config.set('file', []);
    expect(config.pods().map((p) => p.metadata.uid)).toEqual(['3']);
    expect(problems).toEqual(['Error validating pod a_default(2) from file due to duplicate pod name "a", ignoring']);
    expect(updates.map((u) => u.op)).toEqual(['ADD', 'ADD', 'REMOVE']);
  });

  it('hands the listener copies', () => {
    const { config, updates } = setup();
    config.set('api', [apiPod('1', 'a')]);
    updates[0]!.pods[0]!.spec.changed = true;
    expect(config.pods()[0]!.spec.changed).toBeUndefined();
  });
});

describe('mirror pods', () => {
  const staticPod = decodeManifestFile(manifest('web'), '/p/web.yaml', 'n');
  const hash = staticPod.metadata.annotations![configHashAnnotation()]!;
  const mirror = (annotations: Record<string, string>, extra: Partial<SourcePod['metadata']> = {}): SourcePod => ({
    metadata: { name: 'web-n', namespace: 'default', uid: 'm1', annotations, ...extra },
    spec: {},
  });

  it('makes the mirror object: same spec, mirror annotation = hash, no uid', () => {
    const m = mirrorPodOf(staticPod);
    expect(m.metadata.annotations![configMirrorAnnotation()]).toBe(hash);
    expect(m.metadata.uid).toBeUndefined();
    expect(m.spec).toEqual(staticPod.spec);
    expect(splitMirrorPods([m, staticPod])).toEqual({ pods: [staticPod], mirrors: [m] });
  });

  it.each([
    ['no mirror: create', [], true, ['create web-n']],
    ['a current mirror: nothing', [mirror({ [configMirrorAnnotation()]: hash })], true, []],
    ['a mirror with another hash: delete and create', [mirror({ [configMirrorAnnotation()]: 'old' })], true, ['delete web-n m1 outdated', 'create web-n']],
    ['a terminating mirror: delete and create', [mirror({ [configMirrorAnnotation()]: hash }, { deletionTimestamp: 'x' })], true, ['delete web-n m1 terminating', 'create web-n']],
  ] as const)('%s', (_what, mirrors, orphans, expected) => {
    const actions = planMirrorPods([staticPod], mirrors as readonly SourcePod[], orphans);
    expect(actions.map((a) => (a.type === 'create' ? `create ${a.staticPod.metadata.name}` : `delete ${a.name} ${a.uid} ${a.reason}`))).toEqual(expected);
  });

  it('deletes a mirror without a static pod only once the static sources were read', () => {
    const orphan = mirror({ [configMirrorAnnotation()]: hash });
    expect(planMirrorPods([], [orphan], false)).toEqual([]);
    expect(planMirrorPods([], [orphan], true)).toEqual([{ type: 'delete', namespace: 'default', name: 'web-n', uid: 'm1', reason: 'orphaned' }]);
  });
});
