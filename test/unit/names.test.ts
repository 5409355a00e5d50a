/**
 * The two name sets (src/api/names.ts) and what is computed from them: the resource catalog, the
 * RBAC bootstrap policy, node label rules; the `--names` option (validation, name-set-dependent
 * defaults, orch up's table); the daemons' discovery of the server's set; the reported version.
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import {NAME_SET_IDS, nameSet, names, parseNameSetId, perNameSet, selectNames} from '../../src/api/names.js';
import {builtinGroupOrder, builtinResource, builtinResources} from '../../src/api/resources.js';
import {bootstrapClusterRoleBindings, bootstrapClusterRoles} from '../../src/daemons/apiserver/authorization/bootstrap-policy.js';
import {isAllowedNodeLabel, validateNodeLabels} from '../../src/api/node-labels.js';
import {OptionsError, resolveOptions, applyNameSetDefaults} from '../../src/options/resolve.js';
import {apiserverOptions} from '../../src/options/apiserver.js';
import {controllerManagerOptions} from '../../src/options/controller-manager.js';
import {agentOptions} from '../../src/options/agent.js';
import {upOptions} from '../../src/options/up.js';
import {nameSetFromGroups, selectDaemonNames} from '../../src/lib/select-names.js';
import {EMULATED_KUBERNETES, reportedVersion, versionInfo} from '../../src/lib/version.js';
import {resourceKeyPrefix} from '../../src/daemons/apiserver/storage-keys.js';
import {decodeAgentConfiguration} from '../../src/daemons/agent/config/decode.js';
import {formatAgentConfiguration} from '../../src/daemons/agent/config/print.js';

afterEach(() => {
  selectNames('orch');
});

describe('the name sets', () => {
  it('are the seed\'s by default', () => {
    expect(names().id).toBe('orch');
  });

  it.each([
    ['orch', 'orch-system', 'orch-node-lease', 'coordination.orch.io', 'rbac.orch.io', 'orch.io/hostname', 'node.orch.io/unreachable', 'system:orch-controller-manager', 'application/vnd.orch.protobuf'],
    ['kubernetes', 'kube-system', 'kube-node-lease', 'coordination.k8s.io', 'rbac.authorization.k8s.io', 'kubernetes.io/hostname', 'node.kubernetes.io/unreachable', 'system:kube-controller-manager', 'application/vnd.kubernetes.protobuf'],
  ] as const)('%s: %s, %s, %s, %s, %s, %s, %s, %s', (id, system, nodeLease, coordination, rbac, hostname, unreachable, cm, protobuf) => {
    const n = nameSet(id);
    expect([n.namespaces.system, n.namespaces.nodeLease, n.groups.coordination, n.groups.rbac, n.labels.hostname, n.taints.unreachable, n.users.controllerManager, n.protobufMediaType])
      .toEqual([system, nodeLease, coordination, rbac, hostname, unreachable, cm, protobuf]);
  });

  it('upstream\'s set uses upstream\'s spellings where they are not a plain rename', () => {
    const k = nameSet('kubernetes');
    expect(k.groups.flowcontrol).toBe('flowcontrol.apiserver.k8s.io');
    expect(k.annotations.rbacAutoupdate).toBe('rbac.authorization.kubernetes.io/autoupdate');
    expect(k.agentConfig).toEqual({apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration'});
    expect(k.signers.kubeletServing).toBe('kubernetes.io/kubelet-serving');
    expect(k.secretTypes.serviceAccountToken).toBe('kubernetes.io/service-account-token');
    expect(k.defaultService).toBe('kubernetes');
  });

  it('no identifier of one set leaks into the other', () => {
    // initialEventsEnd is upstream's key in both sets (client-go waits for exactly that one).
    const texts = (id: 'orch' | 'kubernetes') => JSON.stringify(nameSet(id)).replace('k8s.io/initial-events-end', '');
    expect(texts('orch')).not.toMatch(/k8s\.io|kubernetes\.io|kube-/);
    expect(texts('kubernetes')).not.toMatch(/orch/);
  });

  it('selectNames switches the process-wide set', () => {
    expect(selectNames('kubernetes').id).toBe('kubernetes');
    expect(names().namespaces.system).toBe('kube-system');
  });

  it('perNameSet computes a value once per name set and follows the selection', () => {
    let builds = 0;
    const systemNamespaces = perNameSet((n) => (builds++, [n.namespaces.system, n.namespaces.public]));
    expect(systemNamespaces()).toEqual(['orch-system', 'orch-public']);
    expect(systemNamespaces()).toBe(systemNamespaces());
    selectNames('kubernetes');
    expect(systemNamespaces()).toEqual(['kube-system', 'kube-public']);
    selectNames('orch');
    systemNamespaces();
    expect(builds).toBe(2);
  });

  it('parseNameSetId accepts the two ids and names the option and the accepted values otherwise', () => {
    for (const id of NAME_SET_IDS) expect(parseNameSetId(id)).toBe(id);
    expect(() => parseNameSetId('k8s')).toThrow('invalid value "k8s" for --names: accepted values are orch, kubernetes');
  });
});

describe('what is computed from the names', () => {
  it('the built-in catalog carries each set\'s groups, memoized per set', () => {
    expect(builtinResource('coordination.orch.io', 'leases')).toBeDefined();
    expect(builtinResource('coordination.k8s.io', 'leases')).toBeUndefined();
    selectNames('kubernetes');
    expect(builtinResource('coordination.k8s.io', 'leases')).toBeDefined();
    expect(builtinResources().some((r) => r.group.endsWith('.orch.io'))).toBe(false);
    expect(builtinResources()).toBe(builtinResources(nameSet('kubernetes')));
    expect(builtinGroupOrder().slice(0, 2)).toEqual(['apps', 'batch']);
  });

  it('storage keys: orch\'s layout for orch\'s names, upstream\'s /registry layout for upstream\'s', () => {
    expect(resourceKeyPrefix('/registry', 'apiextensions.orch.io', 'customresourcedefinitions')).toBe('/registry/apiextensions.orch.io/customresourcedefinitions/');
    expect(resourceKeyPrefix('/registry', 'coordination.orch.io', 'leases')).toBe('/registry/leases/');
    selectNames('kubernetes');
    expect(resourceKeyPrefix('/registry', 'apiextensions.k8s.io', 'customresourcedefinitions')).toBe('/registry/apiextensions.k8s.io/customresourcedefinitions/');
    expect(resourceKeyPrefix('/registry', 'coordination.k8s.io', 'leases')).toBe('/registry/leases/');
    expect(resourceKeyPrefix('/registry', 'rbac.authorization.k8s.io', 'clusterroles')).toBe('/registry/clusterroles/');
  });

  it('the RBAC bootstrap policy follows the set, and callers get copies', () => {
    const role = (id: 'orch' | 'kubernetes') => bootstrapClusterRoles(nameSet(id)).find((r) => r.metadata.name === nameSet(id).users.controllerManager);
    expect(role('orch')?.apiVersion).toBe('rbac.orch.io/v1');
    expect(role('kubernetes')?.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    expect(role('kubernetes')?.rules).toEqual(expect.arrayContaining([{verbs: ['get', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['kube-controller-manager']}]));
    expect(JSON.stringify(bootstrapClusterRoleBindings(nameSet('kubernetes')))).not.toContain('orch');
    const copy = bootstrapClusterRoles();
    copy[0].metadata.name = 'changed';
    expect(bootstrapClusterRoles()[0].metadata.name).toBe('cluster-admin');
  });

  it('node label rules reserve each set\'s domains', () => {
    const k = nameSet('kubernetes');
    expect(isAllowedNodeLabel('kubernetes.io/hostname', k)).toBe(true);
    expect(isAllowedNodeLabel('node.kubernetes.io/pool', k)).toBe(true);
    expect(isAllowedNodeLabel('example.kubernetes.io/x', k)).toBe(false);
    expect(isAllowedNodeLabel('foo.k8s.io/x', k)).toBe(false);
    expect(isAllowedNodeLabel('example.kubernetes.io/x', nameSet('orch'))).toBe(true);
    expect(validateNodeLabels({'example.kubernetes.io/x': 'y'}, k)).toContain("unknown 'kubernetes.io' labels specified with --node-labels: [example.kubernetes.io/x]");
  });
});

describe('--names', () => {
  it('is an orch-only option, in effect, on every daemon and orch up', () => {
    for (const table of [apiserverOptions, controllerManagerOptions, agentOptions, upOptions]) {
      const spec = table.find((o) => o.name === 'names');
      expect(spec).toMatchObject({orchOnly: true, implemented: true, enum: ['orch', 'kubernetes']});
    }
    // The API server and orch up create the cluster: orch's names unless told; the others may ask the server.
    expect(apiserverOptions.find((o) => o.name === 'names')?.default).toBe('orch');
    expect(upOptions.find((o) => o.name === 'names')?.default).toBe('orch');
    expect(controllerManagerOptions.find((o) => o.name === 'names')?.default).toBeUndefined();
    expect(agentOptions.find((o) => o.name === 'names')?.default).toBeUndefined();
  });

  it('refuses another value, naming the option and the accepted values', () => {
    expect(() => resolveOptions('apiserver', apiserverOptions, {names: 'k8s'})).toThrow(OptionsError);
    expect(() => resolveOptions('apiserver', apiserverOptions, {names: 'k8s'})).toThrow('invalid value "k8s" for --names: not one of the accepted values; expected one of orch, kubernetes');
  });

  it('sets the defaults that are product identifiers for the set given', () => {
    const orch = resolveOptions('controller-manager', controllerManagerOptions, {});
    expect([orch.values['leader-elect-resource-namespace'], orch.values['leader-elect-resource-name'], orch.values['cluster-name']]).toEqual(['orch-system', 'orch-controller-manager', 'orch']);
    const kube = resolveOptions('controller-manager', controllerManagerOptions, {names: 'kubernetes'});
    expect([kube.values['leader-elect-resource-namespace'], kube.values['leader-elect-resource-name'], kube.values['cluster-name']]).toEqual(['kube-system', 'kube-controller-manager', 'kubernetes']);
    // Given values win.
    const given = resolveOptions('controller-manager', controllerManagerOptions, {names: 'kubernetes', 'leader-elect-resource-namespace': 'mine'});
    expect(given.values['leader-elect-resource-namespace']).toBe('mine');
    const api = resolveOptions('apiserver', apiserverOptions, {names: 'kubernetes'});
    expect([api.values['audit-webhook-version'], api.values['audit-log-version']]).toEqual(['audit.k8s.io/v1', 'audit.k8s.io/v1']);
  });

  it('validates --node-labels against the set given on the same command line', () => {
    expect(() => resolveOptions('agent', agentOptions, {names: 'kubernetes', 'node-labels': ['example.kubernetes.io/x=y']})).toThrow("--node-labels: unknown 'kubernetes.io' labels [example.kubernetes.io/x]");
    expect(() => resolveOptions('agent', agentOptions, {names: 'kubernetes', 'node-labels': ['node.kubernetes.io/pool=a']})).not.toThrow();
  });

  it('a daemon without --names takes the set the server serves, and fills its defaults then', async () => {
    const options = resolveOptions('controller-manager', controllerManagerOptions, {});
    const n = await selectDaemonNames(controllerManagerOptions, options, async () => 'kubernetes');
    expect(n.id).toBe('kubernetes');
    expect(names().id).toBe('kubernetes');
    expect(options.values.names).toBe('kubernetes');
    expect(options.values['leader-elect-resource-namespace']).toBe('kube-system');
    // --names wins over discovery; nothing learned falls back to orch's.
    const explicit = resolveOptions('controller-manager', controllerManagerOptions, {names: 'orch'});
    expect((await selectDaemonNames(controllerManagerOptions, explicit, async () => 'kubernetes')).id).toBe('orch');
    const unknown = resolveOptions('agent', agentOptions, {});
    expect((await selectDaemonNames(agentOptions, unknown, async () => undefined)).id).toBe('orch');
  });

  it('applyNameSetDefaults leaves options given on the command line alone', () => {
    const options = resolveOptions('controller-manager', controllerManagerOptions, {'leader-elect-resource-name': 'mine'});
    applyNameSetDefaults(controllerManagerOptions, options, nameSet('kubernetes'));
    expect([options.values['leader-elect-resource-name'], options.values['leader-elect-resource-namespace']]).toEqual(['mine', 'kube-system']);
  });

  it('discovery: the coordination group the server lists tells the set', () => {
    expect(nameSetFromGroups(['apps', 'coordination.k8s.io', 'rbac.authorization.k8s.io'])).toBe('kubernetes');
    expect(nameSetFromGroups(['apps', 'coordination.orch.io'])).toBe('orch');
    expect(nameSetFromGroups(['apps', 'batch'])).toBeUndefined();
  });
});

describe('the reported version', () => {
  it('is the emulated upstream release with orch\'s version as build metadata', () => {
    const r = reportedVersion(versionInfo());
    expect(r).toMatchObject({major: String(EMULATED_KUBERNETES.major), minor: String(EMULATED_KUBERNETES.minor)});
    expect(r.gitVersion).toBe(`v${EMULATED_KUBERNETES.major}.${EMULATED_KUBERNETES.minor}.0+orch.${versionInfo().gitVersion.slice(1)}`);
    expect(r.minCompatibilityMinor).toBe(String(EMULATED_KUBERNETES.minor - 1));
  });

  it('is exactly what --version=vX.Y.Z sets', () => {
    expect(reportedVersion(versionInfo('v1.30.2'))).toMatchObject({major: '1', minor: '30', gitVersion: 'v1.30.2'});
  });
});

describe('the agent\'s configuration file under upstream\'s names', () => {
  const decode = (text: string) => decodeAgentConfiguration(text, {baseDir: '/', allowNull: false});

  it('is a KubeletConfiguration with upstream\'s spelling of the kube* fields', () => {
    selectNames('kubernetes');
    const layer = decode('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nkubeAPIQPS: 7\nmaxPods: 20\n');
    expect(layer.get('orchAPIQPS')).toBe(7);
    expect(layer.get('maxPods')).toBe(20);
    expect(() => decode('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\norchAPIQPS: 7\n')).toThrow('unknown field "orchAPIQPS"');
    expect(() => decode('apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\n')).toThrow('expected kind "KubeletConfiguration" and apiVersion "kubelet.config.k8s.io/v1beta1"');
    const printed = formatAgentConfiguration({apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', orchAPIQPS: 7} as never, 'json');
    expect(JSON.parse(printed)).toEqual({apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', kubeAPIQPS: 7});
  });

  it('stays an AgentConfiguration with orch\'s spelling under orch\'s names', () => {
    expect(decode('apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\norchAPIQPS: 7\n').get('orchAPIQPS')).toBe(7);
    expect(() => decode('apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\nkubeAPIQPS: 7\n')).toThrow('unknown field "kubeAPIQPS"');
  });
});
