import {describe, expect, it} from '@jest/globals';
import {Evaluator, forbiddenDetail} from '../../src/daemons/apiserver/admission/plugins/pod-security/evaluator.js';
import {LATEST, parseVersion, policyToEvaluate, v1, type Level, type Policy} from '../../src/daemons/apiserver/admission/plugins/pod-security/levels.js';
import {DEFAULT_CONFIGURATION, parsePodSecurityConfiguration} from '../../src/daemons/apiserver/admission/plugins/pod-security/configuration.js';
import {PodSecurityAdmission, type PodSecurityRequest} from '../../src/daemons/apiserver/admission/plugins/pod-security/admission.js';
import {createPodSecurity} from '../../src/daemons/apiserver/admission/plugins/pod-security/index.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import type {AdmissionAttributes, AdmissionPluginContext} from '../../src/daemons/apiserver/admission/interfaces.js';
import type {JsonObject} from '../../src/patch/types.js';
import {selectNames} from '../../src/api/names.js';
import {nameOf} from '../../src/daemons/apiserver/rest/objects.js';

const evaluator = new Evaluator();

/** A pod that passes restricted: the fields upstream asks for, on the pod and its one container. */
const restrictedContainer = (name = 'c', extra: Record<string, any> = {}) => ({
  name,
  image: 'busybox',
  ...extra,
  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ['ALL']}, ...extra.securityContext},
});
const restrictedSpec = (extra: Record<string, any> = {}, container: Record<string, any> = {}) => ({
  containers: [restrictedContainer('c', container)],
  ...extra,
  securityContext: {runAsNonRoot: true, seccompProfile: {type: 'RuntimeDefault'}, ...extra.securityContext},
});

function detail(level: Level, version: string, spec: Record<string, any>, annotations?: Record<string, string>): string {
  const result = evaluator.evaluateAggregate({level, version: parseVersion(version)!}, {annotations}, spec);
  return result.allowed ? '' : forbiddenDetail(result);
}

describe('PodSecurity checks (pure)', () => {
  it('latest is the newest check version: v1.35 (the release orch emulates is 1.36)', () => {
    expect(evaluator.maxVersion).toEqual(v1(35));
  });

  it('a privileged pod under restricted:latest gets every violation, in upstream order and words', () => {
    expect(detail('restricted', 'latest', {containers: [{name: 'c', image: 'busybox', securityContext: {privileged: true}}]})).toBe(
      'privileged (container "c" must not set securityContext.privileged=true), ' +
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  const table: Array<[string, Level, string, Record<string, any>, string, Record<string, string>?]> = [
    ['restricted pod passes restricted', 'restricted', 'latest', restrictedSpec(), ''],
    ['restricted pod passes baseline', 'baseline', 'latest', restrictedSpec(), ''],
    ['a bare pod passes baseline', 'baseline', 'latest', {containers: [{name: 'c', image: 'x'}]}, ''],
    ['privileged passes privileged', 'privileged', 'latest', {hostNetwork: true, containers: [{name: 'c', securityContext: {privileged: true}}]}, ''],
    ['host namespaces', 'baseline', 'latest', {hostNetwork: true, hostPID: true, hostIPC: true, containers: [{name: 'c'}]}, 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)'],
    [
      'privileged containers, init and ephemeral too, in visiting order',
      'baseline',
      'latest',
      {
        initContainers: [{name: 'i', securityContext: {privileged: true}}],
        containers: [{name: 'a', securityContext: {privileged: true}}, {name: 'b'}],
        ephemeralContainers: [{name: 'e', securityContext: {privileged: true}}],
      },
      'privileged (containers "i", "a", "e" must not set securityContext.privileged=true)',
    ],
    [
      'non-default capabilities',
      'baseline',
      'latest',
      {containers: [{name: 'c', securityContext: {capabilities: {add: ['NET_RAW', 'CHOWN', 'SYS_ADMIN']}}}]},
      'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
    ['hostPath volumes', 'baseline', 'latest', {volumes: [{name: 'h', hostPath: {path: '/'}}], containers: [{name: 'c'}]}, 'hostPath volumes (volume "h")'],
    [
      'host ports (sorted as text, as upstream)',
      'baseline',
      'latest',
      {containers: [{name: 'a', ports: [{containerPort: 80, hostPort: 8080}]}, {name: 'b', ports: [{containerPort: 1, hostPort: 10000}, {containerPort: 2}]}]},
      'hostPort (containers "a", "b" use hostPorts 10000, 8080)',
    ],
    [
      'probe and lifecycle hosts from v1.34',
      'baseline',
      'v1.34',
      {containers: [{name: 'c', livenessProbe: {httpGet: {host: 'evil', port: 80}}, lifecycle: {preStop: {tcpSocket: {host: 'other', port: 1}}}}]},
      'probe or lifecycle host (container "c" uses probe or lifecycle hosts "evil", "other")',
    ],
    ['probe hosts are allowed before v1.34', 'baseline', 'v1.33', {containers: [{name: 'c', readinessProbe: {httpGet: {host: 'evil', port: 80}}}]}, ''],
    [
      'procMount',
      'baseline',
      'latest',
      {containers: [{name: 'c', securityContext: {procMount: 'Unmasked'}}]},
      'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
    ],
    ['baseline lets a user-namespaced pod unmask /proc from v1.35', 'baseline', 'v1.35', {hostUsers: false, containers: [{name: 'c', securityContext: {procMount: 'Unmasked'}}]}, ''],
    [
      'but not before v1.35',
      'baseline',
      'v1.34',
      {hostUsers: false, containers: [{name: 'c', securityContext: {procMount: 'Unmasked'}}]},
      'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
    ],
    [
      'restricted keeps /proc masked even in a user namespace',
      'restricted',
      'latest',
      restrictedSpec({hostUsers: false}, {securityContext: {procMount: 'Unmasked'}}),
      'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
    ],
    [
      'seLinuxOptions on pod and container',
      'baseline',
      'latest',
      {securityContext: {seLinuxOptions: {type: 'spc_t'}}, containers: [{name: 'c', securityContext: {seLinuxOptions: {user: 'u', role: 'r'}}}]},
      'seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)',
    ],
    ['container_engine_t is allowed from v1.31', 'baseline', 'v1.31', {containers: [{name: 'c', securityContext: {seLinuxOptions: {type: 'container_engine_t'}}}]}, ''],
    [
      'container_engine_t before v1.31',
      'baseline',
      'v1.30',
      {containers: [{name: 'c', securityContext: {seLinuxOptions: {type: 'container_engine_t'}}}]},
      'seLinuxOptions (container "c" set forbidden securityContext.seLinuxOptions: type "container_engine_t")',
    ],
    [
      'seccomp Unconfined under baseline',
      'baseline',
      'latest',
      {securityContext: {seccompProfile: {type: 'Unconfined'}}, containers: [{name: 'c'}]},
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    [
      'seccomp annotations before v1.19',
      'baseline',
      'v1.18',
      {containers: [{name: 'c'}]},
      'seccompProfile (forbidden annotations container.seccomp.security.alpha.orch.io/c="unconfined", seccomp.security.alpha.orch.io/pod="unconfined")',
      {'seccomp.security.alpha.orch.io/pod': 'unconfined', 'container.seccomp.security.alpha.orch.io/c': 'unconfined'},
    ],
    [
      'forbidden sysctls',
      'baseline',
      'latest',
      {securityContext: {sysctls: [{name: 'kernel.msgmax', value: '1'}, {name: 'net.ipv4.tcp_rmem', value: '1'}]}, containers: [{name: 'c'}]},
      'forbidden sysctls (kernel.msgmax)',
    ],
    [
      'tcp_rmem is safe only from v1.32',
      'baseline',
      'v1.31',
      {securityContext: {sysctls: [{name: 'net.ipv4.tcp_rmem', value: '1'}]}, containers: [{name: 'c'}]},
      'forbidden sysctls (net.ipv4.tcp_rmem)',
    ],
    [
      'ip_local_reserved_ports is safe only from v1.27',
      'baseline',
      'v1.26',
      {securityContext: {sysctls: [{name: 'net.ipv4.ip_local_reserved_ports', value: '1'}]}, containers: [{name: 'c'}]},
      'forbidden sysctls (net.ipv4.ip_local_reserved_ports)',
    ],
    [
      'AppArmor fields and annotations',
      'baseline',
      'latest',
      {containers: [{name: 'c', securityContext: {appArmorProfile: {type: 'Unconfined'}}}]},
      // Upstream quotes the annotation (key="value") like the types.
      'forbidden AppArmor profiles (container "c" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.orch.io/c="unconfined"")',
      {'container.apparmor.security.beta.orch.io/c': 'unconfined'},
    ],
    [
      'hostProcess',
      'baseline',
      'latest',
      {securityContext: {windowsOptions: {hostProcess: true}}, containers: [{name: 'c', securityContext: {windowsOptions: {hostProcess: true}}}]},
      'hostProcess (pod and container "c" must not set securityContext.windowsOptions.hostProcess=true)',
    ],
    [
      'restricted volume types replace the hostPath check',
      'restricted',
      'latest',
      restrictedSpec({volumes: [{name: 'h', hostPath: {path: '/'}}, {name: 'n', nfs: {server: 's', path: '/'}}, {name: 'ok', configMap: {name: 'x'}}, {name: 'img', image: {reference: 'r'}}]}),
      'restricted volume types (volumes "h", "n" use restricted volume types "hostPath", "nfs")',
    ],
    [
      'capabilities under restricted',
      'restricted',
      'latest',
      restrictedSpec({}, {securityContext: {capabilities: {drop: ['NET_RAW'], add: ['NET_BIND_SERVICE', 'CHOWN']}}}),
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "CHOWN" in securityContext.capabilities.add)',
    ],
    [
      'before v1.22 restricted checks capabilities as baseline',
      'restricted',
      'v1.21',
      restrictedSpec({}, {securityContext: {capabilities: {add: ['SYS_ADMIN']}}}),
      'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
    ['allowPrivilegeEscalation is not checked before v1.8', 'restricted', 'v1.7', {securityContext: {runAsNonRoot: true}, containers: [{name: 'c'}]}, ''],
    [
      'runAsNonRoot=false explicitly and runAsUser=0',
      'restricted',
      'latest',
      restrictedSpec({securityContext: {runAsNonRoot: false, runAsUser: 0}}),
      'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0)',
    ],
    ['runAsUser=0 is not checked before v1.23', 'restricted', 'v1.22', restrictedSpec({securityContext: {runAsUser: 0}}), ''],
    ['a user-namespaced pod may run as root under restricted from v1.35', 'restricted', 'v1.35', restrictedSpec({hostUsers: false, securityContext: {runAsNonRoot: false, runAsUser: 0}}), ''],
    [
      'but not before v1.35',
      'restricted',
      'v1.34',
      restrictedSpec({hostUsers: false, securityContext: {runAsUser: 0}}),
      'runAsUser=0 (pod must not set runAsUser=0)',
    ],
    [
      'a Windows pod skips the Linux-only restricted checks from v1.25',
      'restricted',
      'v1.25',
      {os: {name: 'windows'}, securityContext: {runAsNonRoot: true}, containers: [{name: 'c'}]},
      '',
    ],
    [
      'but not at v1.24',
      'restricted',
      'v1.24',
      {os: {name: 'windows'}, securityContext: {runAsNonRoot: true}, containers: [{name: 'c'}]},
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ],
    [
      'seccomp set by the containers is enough; a bad one is named',
      'restricted',
      'latest',
      {
        securityContext: {runAsNonRoot: true},
        containers: [restrictedContainer('a', {securityContext: {seccompProfile: {type: 'Localhost'}}}), restrictedContainer('b', {securityContext: {seccompProfile: {type: 'Unconfined'}}})],
      },
      'seccompProfile (container "b" must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    ['a version newer than latest evaluates as latest', 'restricted', 'v1.99', restrictedSpec(), ''],
  ];

  // One rest parameter: jest takes a callback with more parameters than a row has for a done-callback test.
  it.each(table)('%s', (...row) => {
    const [, level, version, spec, expected, annotations] = row;
    expect(detail(level, version, spec, annotations)).toBe(expected);
  });
});

const defaults: Policy = DEFAULT_CONFIGURATION.defaults;

describe('PodSecurity namespace labels', () => {
  it.each([
    [{}, 'privileged:latest privileged:latest privileged:latest', []],
    [{'pod-security.orch.io/enforce': 'restricted', 'pod-security.orch.io/enforce-version': 'v1.24'}, 'restricted:v1.24 privileged:latest privileged:latest', []],
    [{'pod-security.orch.io/warn': 'baseline', 'pod-security.orch.io/audit': 'restricted'}, 'privileged:latest restricted:latest baseline:latest', []],
    // Unparseable: enforce fails closed (restricted), audit and warn fail open (privileged), versions become latest.
    [
      {'pod-security.orch.io/enforce': 'strict', 'pod-security.orch.io/warn': 'loud', 'pod-security.orch.io/audit-version': '1.25'},
      'restricted:latest privileged:latest privileged:latest',
      [
        'metadata.labels[pod-security.orch.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
        'metadata.labels[pod-security.orch.io/audit-version]: Invalid value: "1.25": must be "latest" or "v1.x"',
        'metadata.labels[pod-security.orch.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted',
      ],
    ],
  ])('%j', (labels, expected, errors) => {
    const {policy, errors: found} = policyToEvaluate(labels, defaults);
    const show = (lv: {level: string; version: {latest: boolean; minor: number}}) => `${lv.level}:${lv.version.latest ? 'latest' : `v1.${lv.version.minor}`}`;
    expect(`${show(policy.enforce)} ${show(policy.audit)} ${show(policy.warn)}`).toBe(expected);
    expect(found.map((e) => `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`)).toEqual(errors);
  });

  it('reads the label keys of the name set in effect', () => {
    selectNames('kubernetes');
    try {
      expect(policyToEvaluate({'pod-security.kubernetes.io/enforce': 'baseline'}, defaults).policy.enforce.level).toBe('baseline');
      expect(policyToEvaluate({'pod-security.orch.io/enforce': 'baseline'}, defaults).policy.enforce.level).toBe('privileged');
    } finally {
      selectNames('orch');
    }
  });
});

const API_VERSION = 'pod-security.admission.config.orch.io/v1';

describe('PodSecurityConfiguration', () => {
  it('defaults to privileged:latest everywhere, no exemptions', () => {
    expect(parsePodSecurityConfiguration(undefined)).toEqual(DEFAULT_CONFIGURATION);
    expect(parsePodSecurityConfiguration({apiVersion: API_VERSION, kind: 'PodSecurityConfiguration'})).toEqual(DEFAULT_CONFIGURATION);
  });

  it('reads defaults and exemptions', () => {
    const config = parsePodSecurityConfiguration({
      apiVersion: 'pod-security.admission.config.orch.io/v1beta1',
      kind: 'PodSecurityConfiguration',
      defaults: {enforce: 'baseline', 'enforce-version': 'v1.30', warn: 'restricted'},
      exemptions: {usernames: ['alice'], namespaces: ['ops'], runtimeClasses: ['kata.example']},
    });
    expect(config.defaults.enforce).toEqual({level: 'baseline', version: v1(30)});
    expect(config.defaults.warn).toEqual({level: 'restricted', version: LATEST});
    expect(config.defaults.audit).toEqual({level: 'privileged', version: LATEST});
    expect(config.exemptions).toEqual({usernames: ['alice'], namespaces: ['ops'], runtimeClasses: ['kata.example']});
  });

  it.each([
    [{defaults: {enforce: 'strict'}}, 'defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted'],
    [{defaults: {'audit-version': '1.2'}}, 'defaults.audit-version: Invalid value: "1.2": must be "latest" or "v1.x"'],
    [{defaults: {enfroce: 'baseline'}}, 'unknown field "defaults.enfroce"'],
    [{exemptions: {namespaces: ['Bad_NS']}}, 'exemptions.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label'],
    [{exemptions: {usernames: ['a', 'a']}}, 'exemptions.usernames[1]: Duplicate value: "a"'],
    [{exemptions: {usernames: ['']}}, 'exemptions.usernames[0]: Required value'],
    [{apiVersion: 'v1'}, 'apiVersion "v1" is not one of pod-security.admission.config.orch.io/v1'],
  ])('refuses %j', (patch, message) => {
    expect(() => parsePodSecurityConfiguration({apiVersion: API_VERSION, kind: 'PodSecurityConfiguration', ...patch})).toThrow(message);
  });

  it('a bad configuration stops the plugin factory with the plugin, the source and the problem', () => {
    const context = {configuration: {apiVersion: API_VERSION, kind: 'PodSecurityConfiguration', defaults: {enforce: 'strict'}}, configurationSource: '/etc/admission.yaml: plugin PodSecurity'};
    expect(() => createPodSecurity(context as unknown as AdmissionPluginContext)).toThrow(
      '/etc/admission.yaml: plugin PodSecurity: invalid configuration: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The decision, with a namespace table and a pod list in memory.

interface Harness {
  admission: PodSecurityAdmission;
  namespaces: Record<string, Record<string, string>>;
  pods: Record<string, JsonObject[]>;
  /** Moves the injected clock (synchronously: the pod loop reads it between evaluations). */
  tick(ms: number): void;
}

function harness(config: unknown = undefined): Harness {
  const namespaces: Record<string, Record<string, string>> = {};
  const pods: Record<string, JsonObject[]> = {};
  let time = 0;
  const admission = new PodSecurityAdmission(parsePodSecurityConfiguration(config), {
    namespaceLabels: async (name) => namespaces[name],
    listPods: async (ns) => pods[ns] ?? [],
    clock: {now: () => time, setTimeout: () => ({}), clearTimeout: () => undefined},
  });
  return {admission, namespaces, pods, tick: (ms) => (time += ms)};
}

const pod = (name: string, spec: Record<string, any>, metadata: Record<string, any> = {}): JsonObject => ({apiVersion: 'v1', kind: 'Pod', metadata: {name, ...metadata}, spec});
const privilegedPod = (name = 'p') => pod(name, {containers: [{name: 'c', image: 'busybox', securityContext: {privileged: true}}]});
const createPod = (object: JsonObject, namespace = 'ns', username = 'bob'): PodSecurityRequest => ({
  operation: 'CREATE', group: '', resource: 'pods', subresource: '', namespace, name: nameOf(object), object, username,
});

describe('PodSecurity decision', () => {
  it('enforce refuses a violating pod with upstream Forbidden status; audit and warn stay silent about it', async () => {
    const h = harness();
    h.namespaces.ns = {'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'restricted', 'pod-security.orch.io/audit': 'restricted'};
    const decision = await h.admission.validate(createPod(privilegedPod('x')));
    expect(decision.error?.status.code).toBe(403);
    expect(decision.error?.status.reason).toBe('Forbidden');
    expect(decision.error?.status.message).toBe('pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
    expect(decision.warnings).toEqual([]);
    expect(decision.auditAnnotations['enforce-policy']).toBe('baseline:latest');
    expect(decision.auditAnnotations['audit-violations']).toMatch(/^would violate PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false/);
  });

  it('warn allows with a warning; audit annotates', async () => {
    const h = harness();
    h.namespaces.ns = {'pod-security.orch.io/warn': 'baseline', 'pod-security.orch.io/audit': 'baseline'};
    const decision = await h.admission.validate(createPod(privilegedPod('x')));
    expect(decision.error).toBeUndefined();
    expect(decision.warnings).toEqual(['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
    expect(decision.auditAnnotations).toEqual({
      'enforce-policy': 'privileged:latest',
      'audit-violations': 'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    });
  });

  it('a fully privileged namespace allows at once, with the enforce-policy annotation', async () => {
    const h = harness();
    h.namespaces.ns = {};
    expect(await h.admission.validate(createPod(privilegedPod()))).toEqual({warnings: [], auditAnnotations: {'enforce-policy': 'privileged:latest'}});
  });

  it('configured defaults apply to namespaces without labels', async () => {
    const h = harness({apiVersion: API_VERSION, kind: 'PodSecurityConfiguration', defaults: {enforce: 'baseline'}});
    h.namespaces.ns = {};
    expect((await h.admission.validate(createPod(privilegedPod()))).error?.status.message).toContain('violates PodSecurity "baseline:latest"');
  });

  it('unparseable labels are recorded and enforce fails closed', async () => {
    const h = harness();
    h.namespaces.ns = {'pod-security.orch.io/enforce': 'strict'};
    const decision = await h.admission.validate(createPod(privilegedPod()));
    expect(decision.error?.status.message).toContain('violates PodSecurity "restricted:latest"');
    expect(decision.auditAnnotations.error).toBe(
      'Failed to parse policy: metadata.labels[pod-security.orch.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    );
  });

  it('exempt namespaces, users and runtime classes skip the checks and say why', async () => {
    const h = harness({apiVersion: API_VERSION, kind: 'PodSecurityConfiguration', exemptions: {namespaces: ['ops'], usernames: ['ci'], runtimeClasses: ['kata']}});
    h.namespaces.ns = {'pod-security.orch.io/enforce': 'restricted'};
    h.namespaces.ops = {'pod-security.orch.io/enforce': 'restricted'};
    expect(await h.admission.validate(createPod(privilegedPod(), 'ops'))).toEqual({warnings: [], auditAnnotations: {exempt: 'namespace'}});
    expect(await h.admission.validate(createPod(privilegedPod(), 'ns', 'ci'))).toEqual({warnings: [], auditAnnotations: {exempt: 'user'}});
    const kata = pod('k', {runtimeClassName: 'kata', containers: [{name: 'c', securityContext: {privileged: true}}]});
    expect(await h.admission.validate(createPod(kata))).toEqual({warnings: [], auditAnnotations: {exempt: 'runtimeClass'}});
    expect((await h.admission.validate(createPod(privilegedPod()))).error).toBeDefined();
  });

  it('workloads get warnings and audit for their pod template but are never refused', async () => {
    const h = harness();
    h.namespaces.ns = {'pod-security.orch.io/enforce': 'restricted', 'pod-security.orch.io/warn': 'restricted'};
    const template = {metadata: {labels: {app: 'a'}}, spec: {containers: [{name: 'c', image: 'busybox', securityContext: {privileged: true}}]}};
    const cases: Array<[string, string, JsonObject]> = [
      ['apps', 'deployments', {metadata: {name: 'd'}, spec: {template}}],
      ['batch', 'jobs', {metadata: {name: 'j'}, spec: {template}}],
      ['batch', 'cronjobs', {metadata: {name: 'cj'}, spec: {jobTemplate: {spec: {template}}}}],
      ['', 'podtemplates', {metadata: {name: 'pt'}, template}],
    ];
    for (const [group, resource, object] of cases) {
      const decision = await h.admission.validate({operation: 'CREATE', group, resource, subresource: '', namespace: 'ns', name: 'w', object, username: 'bob'});
      expect(decision.error).toBeUndefined();
      expect(decision.warnings).toHaveLength(1);
      expect(decision.warnings[0]).toMatch(/^would violate PodSecurity "restricted:latest": privileged \(container "c" must not set/);
      expect(decision.auditAnnotations['enforce-policy']).toBeUndefined();
    }
    // A replication controller without a template has nothing to check; a scale subresource neither.
    expect(await h.admission.validate({operation: 'CREATE', group: '', resource: 'replicationcontrollers', subresource: '', namespace: 'ns', name: 'rc', object: {spec: {}}, username: 'bob'}))
      .toEqual({warnings: [], auditAnnotations: {}});
    expect((await h.admission.validate({operation: 'UPDATE', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'd', object: {}, username: 'bob'})).warnings).toEqual([]);
  });

  it('pod updates are checked only when what the checks read can change; status and exec never', async () => {
    const h = harness();
    h.namespaces.ns = {'pod-security.orch.io/enforce': 'baseline'};
    const old = privilegedPod('x');
    const labelled = pod('x', old.spec as Record<string, unknown>, {labels: {a: 'b'}});
    const update = (object: JsonObject, subresource = ''): PodSecurityRequest => ({...createPod(object), operation: 'UPDATE', oldObject: old, subresource});
    expect((await h.admission.validate(update(labelled))).error).toBeUndefined();
    const newImage = pod('x', {containers: [{name: 'c', image: 'nginx', securityContext: {privileged: true}}]});
    expect((await h.admission.validate(update(newImage))).error?.status.code).toBe(403);
    expect((await h.admission.validate(update(newImage, 'status'))).error).toBeUndefined();
    const withEphemeral = pod('x', {...(old.spec as Record<string, unknown>), ephemeralContainers: [{name: 'debug', image: 'busybox'}]});
    expect((await h.admission.validate(update(withEphemeral, 'ephemeralcontainers'))).error?.status.code).toBe(403);
  });

  it('a pod in a namespace that cannot be read is refused with an internal error', async () => {
    const h = harness();
    const decision = await h.admission.validate(createPod(privilegedPod(), 'gone'));
    expect(decision.error?.status.code).toBe(500);
    expect(decision.error?.status.message).toBe('Internal error occurred: failed to lookup namespace "gone"');
  });
});

describe('PodSecurity on namespaces', () => {
  const namespace = (name: string, labels: Record<string, string>): JsonObject => ({apiVersion: 'v1', kind: 'Namespace', metadata: {name, labels}});
  const request = (operation: 'CREATE' | 'UPDATE', object: JsonObject, oldObject?: JsonObject): PodSecurityRequest => ({
    operation, group: '', resource: 'namespaces', subresource: '', namespace: '', name: nameOf(object), object, oldObject, username: 'bob',
  });

  it('refuses bad labels with 422 Invalid naming each label', async () => {
    const h = harness();
    const decision = await h.admission.validate(request('CREATE', namespace('n', {'pod-security.orch.io/enforce': 'strict', 'pod-security.orch.io/warn-version': 'x'})));
    expect(decision.error?.status.code).toBe(422);
    expect(decision.error?.status.message).toBe(
      'Namespace "n" is invalid: [metadata.labels[pod-security.orch.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, ' +
        'metadata.labels[pod-security.orch.io/warn-version]: Invalid value: "x": must be "latest" or "v1.x"]',
    );
  });

  it('lets a namespace whose bad labels do not change be updated', async () => {
    const h = harness();
    const old = namespace('n', {'pod-security.orch.io/enforce': 'strict'});
    const next = namespace('n', {'pod-security.orch.io/enforce': 'strict', team: 'a'});
    expect((await h.admission.validate(request('UPDATE', next, old))).error).toBeUndefined();
  });

  it('a stricter enforce level warns about the existing pods, grouped by violation', async () => {
    const h = harness();
    h.pods.n = [
      privilegedPod('b'),
      privilegedPod('a'),
      privilegedPod('c'),
      pod('h', {hostNetwork: true, containers: [{name: 'c'}]}),
      pod('fine', {containers: [{name: 'c'}]}),
    ];
    const decision = await h.admission.validate(request('UPDATE', namespace('n', {'pod-security.orch.io/enforce': 'baseline'}), namespace('n', {})));
    expect(decision.error).toBeUndefined();
    expect(decision.warnings).toEqual([
      'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
      'a (and 2 other pods): privileged',
      'h: host namespaces',
    ]);
  });

  it('no pod check when enforce is unchanged, privileged, or laxer at the same version', async () => {
    const h = harness();
    h.pods.n = [privilegedPod('a')];
    const with_ = (labels: Record<string, string>) => namespace('n', labels);
    const restricted = {'pod-security.orch.io/enforce': 'restricted'};
    expect((await h.admission.validate(request('UPDATE', with_({...restricted, x: 'y'}), with_(restricted)))).warnings).toEqual([]);
    expect((await h.admission.validate(request('UPDATE', with_({'pod-security.orch.io/enforce': 'baseline'}), with_(restricted)))).warnings).toEqual([]);
    expect((await h.admission.validate(request('UPDATE', with_({'pod-security.orch.io/enforce': 'privileged'}), with_(restricted)))).warnings).toEqual([]);
    // A version change to a laxer level still checks.
    const pinned = with_({'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/enforce-version': 'v1.20'});
    expect((await h.admission.validate(request('UPDATE', pinned, with_(restricted)))).warnings).toHaveLength(2);
  });

  it('stops checking pods after one second (injected clock) and says how many it checked', async () => {
    const h = harness(undefined);
    h.pods.n = [privilegedPod('a'), privilegedPod('b'), privilegedPod('c')];
    let evaluated = 0;
    // Each evaluation moves the fake clock half a second: two pods fit in the second.
    const original = h.admission.evaluator.evaluateAggregate.bind(h.admission.evaluator);
    h.admission.evaluator.evaluateAggregate = (...args) => {
      evaluated++;
      h.tick(500);
      return original(...args);
    };
    const decision = await h.admission.validate(request('UPDATE', namespace('n', {'pod-security.orch.io/enforce': 'baseline'}), namespace('n', {})));
    expect(evaluated).toBe(2);
    expect(decision.warnings).toEqual([
      'new PodSecurity enforce level only checked against the first 2 of 3 existing pods',
      'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
      'a (and 1 other pod): privileged',
    ]);
  });

  it('checks one pod per controller first, and skips exempt runtime classes', async () => {
    const h = harness({apiVersion: API_VERSION, kind: 'PodSecurityConfiguration', exemptions: {runtimeClasses: ['kata']}});
    const owned = (name: string, uid: string) => pod(name, {containers: [{name: 'c', securityContext: {privileged: true}}]}, {ownerReferences: [{uid, controller: true, name: 'rs', kind: 'ReplicaSet', apiVersion: 'apps/v1'}]});
    h.pods.n = [owned('r1', 'u1'), owned('r2', 'u1'), owned('r3', 'u1'), pod('k', {runtimeClassName: 'kata', hostPID: true, containers: [{name: 'c'}]}), pod('h', {hostIPC: true, containers: [{name: 'c'}]})];
    const order: string[] = [];
    const original = h.admission.evaluator.evaluateAggregate.bind(h.admission.evaluator);
    h.admission.evaluator.evaluateAggregate = (lv, metadata, spec) => {
      order.push(spec.hostIPC ? 'h' : 'r');
      return original(lv, metadata, spec);
    };
    const decision = await h.admission.validate(request('UPDATE', namespace('n', {'pod-security.orch.io/enforce': 'baseline'}), namespace('n', {})));
    expect(order).toEqual(['r', 'h', 'r', 'r']);
    expect(decision.warnings).toEqual([
      'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
      'h: host namespaces',
      'r1 (and 2 other pods): privileged',
    ]);
  });

  it('an exempt namespace given a policy is told it will be ignored', async () => {
    const h = harness({apiVersion: API_VERSION, kind: 'PodSecurityConfiguration', exemptions: {namespaces: ['ops']}});
    const decision = await h.admission.validate(request('CREATE', namespace('ops', {'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'restricted'})));
    expect(decision.warnings).toEqual(['namespace "ops" is exempt from Pod Security, and the policy (enforce=baseline:latest, warn=restricted:latest) will be ignored']);
  });
});

describe('PodSecurity plugin', () => {
  it('passes warnings and prefixed audit annotations to the request, and throws the refusal', async () => {
    const objects = {
      get: async (_g: string, _r: string, _ns: string, name: string) => (name === 'ns' ? {metadata: {name, labels: {'pod-security.orch.io/enforce': 'baseline', 'pod-security.orch.io/warn': 'restricted'}}} : undefined),
      list: async () => [],
    };
    const plugin = createPodSecurity({objects, clock: new FakeClock(0)} as unknown as AdmissionPluginContext);
    const warnings: string[] = [];
    const annotations: Record<string, string> = {};
    const attributes = (object: JsonObject): AdmissionAttributes => ({
      operation: 'CREATE',
      resource: {group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', namespaced: true, verbs: [], subresources: [], storagePrefix: 'pods'},
      subresource: '', namespace: 'ns', name: 'x', object, user: {name: 'bob', groups: []}, dryRun: false,
      addWarning: (w) => warnings.push(w),
      addAnnotation: (k, v) => (annotations[k] = v),
    });
    await plugin.validate(attributes(pod('x', restrictedSpec({}, {securityContext: {allowPrivilegeEscalation: true}}))));
    expect(warnings).toEqual(['would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)']);
    expect(annotations).toEqual({'pod-security.orch.io/enforce-policy': 'baseline:latest'});
    await expect(plugin.validate(attributes(privilegedPod('x')))).rejects.toMatchObject({status: {code: 403}});
    expect(plugin.handles('DELETE')).toBe(false);
  });
});
