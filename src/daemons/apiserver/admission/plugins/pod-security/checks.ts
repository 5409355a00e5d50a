/**
 * The Pod Security Standards as upstream's checks (pod-security-admission/policy/check_*.go), at
 * the state of the release orch emulates (1.36: the newest check version is v1.35, so `latest`
 * means v1.35). Each check has an ID, a level, and versions: the check a policy version uses is the
 * newest one at or below it. A restricted check may override baseline checks it supersedes. The
 * messages are upstream's, word for word: users and tools match on them. Pure functions of a pod's
 * metadata and spec (JSON as served).
 */
import {names} from '../../../../../api/names.js';
import {v1, type Level, type Version} from './levels.js';

import type {ContainerView, HandlerView, PodMetadata, PodSpecView, SELinuxOptionsView, VolumeView} from './pod-view.js';

export type {PodMetadata, PodSpecView} from './pod-view.js';

export interface CheckResult {
  allowed: boolean;
  /** Short, always shown (`host ports`, `privileged`). */
  reason?: string;
  /** The specifics, shown when one object is checked (`container "c" must not set ...`). */
  detail?: string;
}

export type CheckPodFn = (metadata: PodMetadata, spec: PodSpecView) => CheckResult;

export interface VersionedCheck {
  minimumVersion: Version;
  check: CheckPodFn;
  /** Baseline checks this restricted check replaces at the restricted level (from this version on). */
  overrides?: readonly string[];
}

export interface Check {
  id: string;
  level: Exclude<Level, 'privileged'>;
  /** Strictly increasing minimum versions. */
  versions: readonly VersionedCheck[];
}

const ALLOWED: CheckResult = {allowed: true};

function forbid(reason: string, detail: string): CheckResult {
  return {allowed: false, reason, detail};
}

// Upstream's helpers.go.
export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
function containersPhrase(containers: readonly string[]): string {
  return `${pluralize('container', 'containers', containers.length)} ${joinQuote(containers)}`;
}

/** Sorted distinct values, as Go's sets.String.List(). */
function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** The objects of a list field (JSON as served: anything else is skipped). */
function objects<T extends object>(value: readonly T[] | undefined): T[] {
  return Array.isArray(value) ? value.filter((item): item is T => typeof item === 'object' && item !== null) : [];
}

/** The strings of a list field. */
function strings(value: readonly string[] | undefined): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** Init containers, then containers, then ephemeral containers (upstream's visitContainers). */
function containersOf(spec: PodSpecView): ContainerView[] {
  return [...objects(spec.initContainers), ...objects(spec.containers), ...objects(spec.ephemeralContainers)];
}

const nameOf = (c: ContainerView): string => (typeof c.name === 'string' ? c.name : '');
const securityContext = (c: ContainerView) => c.securityContext ?? undefined;
const podSecurityContext = (spec: PodSpecView) => spec.securityContext ?? undefined;
const isWindowsPod = (spec: PodSpecView): boolean => spec.os?.name === 'windows';
/** A pod in its own user namespace (`hostUsers: false`): some checks are relaxed for it from v1.35 (KEP-127). */
const inUserNamespace = (spec: PodSpecView): boolean => spec.hostUsers === false;

/** Go's %q of a string, for annotation values in messages. */
const quoted = (s: string): string => JSON.stringify(s);

// ---------------------------------------------------------------------------------------------
// Baseline

const appArmorProfile: CheckPodFn = (metadata, spec) => {
  const allowedType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
  const badSetters: string[] = [];
  const badValues: string[] = [];
  const podProfile = podSecurityContext(spec)?.appArmorProfile;
  if (podProfile && !allowedType(podProfile.type)) {
    badSetters.push('pod');
    badValues.push(String(podProfile.type ?? ''));
  }
  const badContainers: string[] = [];
  for (const c of containersOf(spec)) {
    const profile = securityContext(c)?.appArmorProfile;
    if (profile && !allowedType(profile.type)) {
      badContainers.push(nameOf(c));
      badValues.push(String(profile.type ?? ''));
    }
  }
  if (badContainers.length) badSetters.push(containersPhrase(badContainers));
  const prefix = names().annotations.appArmorContainerPrefix;
  const forbiddenAnnotations = Object.entries(metadata.annotations ?? {})
    .filter(([k, v]) => k.startsWith(prefix) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/')))
    .map(([k, v]) => `${k}=${quoted(v)}`)
    .sort();
  const values = sortedSet(badValues);
  if (forbiddenAnnotations.length) {
    values.push(...forbiddenAnnotations);
    badSetters.push(pluralize('annotation', 'annotations', forbiddenAnnotations.length));
  }
  if (!badSetters.length) return ALLOWED;
  return forbid(
    pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    `${badSetters.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  );
};

const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]);

function addedCapabilities(c: ContainerView): string[] {
  return strings(securityContext(c)?.capabilities?.add);
}

const capabilitiesBaseline: CheckPodFn = (_metadata, spec) => {
  const badContainers: string[] = [];
  const nonDefault: string[] = [];
  for (const c of containersOf(spec)) {
    const bad = addedCapabilities(c).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (bad.length) {
      badContainers.push(nameOf(c));
      nonDefault.push(...bad);
    }
  }
  if (!badContainers.length) return ALLOWED;
  return forbid('non-default capabilities', `${containersPhrase(badContainers)} must not include ${joinQuote(sortedSet(nonDefault))} in securityContext.capabilities.add`);
};

const hostNamespaces: CheckPodFn = (_metadata, spec) => {
  const used = [
    spec.hostNetwork === true ? 'hostNetwork=true' : '',
    spec.hostPID === true ? 'hostPID=true' : '',
    spec.hostIPC === true ? 'hostIPC=true' : '',
  ].filter(Boolean);
  return used.length ? forbid('host namespaces', used.join(', ')) : ALLOWED;
};

function volumesOf(spec: PodSpecView): VolumeView[] {
  return objects(spec.volumes);
}

const hostPathVolumes: CheckPodFn = (_metadata, spec) => {
  const bad = volumesOf(spec).filter((v) => v.hostPath != null).map((v) => String(v.name ?? ''));
  return bad.length ? forbid('hostPath volumes', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}`) : ALLOWED;
};

const hostPorts: CheckPodFn = (_metadata, spec) => {
  const badContainers: string[] = [];
  const ports: string[] = [];
  for (const c of containersOf(spec)) {
    const used = objects(c.ports).map((p) => Number(p.hostPort ?? 0)).filter((p) => p !== 0);
    if (used.length) {
      badContainers.push(nameOf(c));
      ports.push(...used.map(String));
    }
  }
  if (!badContainers.length) return ALLOWED;
  const distinct = sortedSet(ports);
  return forbid(
    'hostPort',
    `${containersPhrase(badContainers)} ${pluralize('uses', 'use', badContainers.length)} ${pluralize('hostPort', 'hostPorts', distinct.length)} ${distinct.join(', ')}`,
  );
};

/** The hosts a probe or lifecycle handler names (httpGet.host, tcpSocket.host). */
function handlerHosts(handler: HandlerView | undefined): string[] {
  if (!handler || typeof handler !== 'object') return [];
  return [handler.httpGet?.host, handler.tcpSocket?.host].filter((h): h is string => typeof h === 'string' && h !== '');
}

const hostProbesAndHostLifecycle: CheckPodFn = (_metadata, spec) => {
  const badContainers = new Set<string>();
  const hosts = new Set<string>();
  for (const c of containersOf(spec)) {
    const found = [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop].flatMap(handlerHosts);
    if (found.length) {
      badContainers.add(nameOf(c));
      found.forEach((h) => hosts.add(h));
    }
  }
  if (!badContainers.size) return ALLOWED;
  const containers = sortedSet(badContainers);
  const hostList = sortedSet(hosts);
  return forbid(
    'probe or lifecycle host',
    `${containersPhrase(containers)} ${pluralize('uses', 'use', containers.length)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', hostList.length)} ${joinQuote(hostList)}`,
  );
};

const privileged: CheckPodFn = (_metadata, spec) => {
  const bad = containersOf(spec).filter((c) => securityContext(c)?.privileged === true).map(nameOf);
  return bad.length ? forbid('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`) : ALLOWED;
};

/** Only the default /proc masks (procMount unset or `Default`). */
const procMountStrict: CheckPodFn = (_metadata, spec) => {
  const badContainers: string[] = [];
  const types: string[] = [];
  for (const c of containersOf(spec)) {
    const procMount = securityContext(c)?.procMount;
    if (procMount != null && procMount !== 'Default') {
      badContainers.push(nameOf(c));
      types.push(String(procMount));
    }
  }
  if (!badContainers.length) return ALLOWED;
  return forbid('procMount', `${containersPhrase(badContainers)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`);
};

/** From v1.35, baseline lets a pod in its own user namespace unmask /proc. */
const procMountBaselineV1Dot35: CheckPodFn = (metadata, spec) => (inUserNamespace(spec) ? ALLOWED : procMountStrict(metadata, spec));

function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckPodFn {
  return (_metadata, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const valid = (options: SELinuxOptionsView): boolean => {
      let ok = true;
      const type = typeof options.type === 'string' ? options.type : '';
      if (!allowedTypes.has(type)) {
        ok = false;
        badTypes.push(type);
      }
      if (typeof options.user === 'string' && options.user !== '') {
        ok = false;
        setUser = true;
      }
      if (typeof options.role === 'string' && options.role !== '') {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const badSetters: string[] = [];
    const podOptions = podSecurityContext(spec)?.seLinuxOptions;
    if (podOptions && !valid(podOptions)) badSetters.push('pod');
    const badContainers = containersOf(spec)
      .filter((c) => {
        const options = securityContext(c)?.seLinuxOptions;
        return options && !valid(options);
      })
      .map(nameOf);
    if (badContainers.length) badSetters.push(containersPhrase(badContainers));
    if (!badSetters.length) return ALLOWED;
    const problems: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length) problems.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) problems.push('user may not be set');
    if (setRole) problems.push('role may not be set');
    return forbid('seLinuxOptions', `${badSetters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${problems.join('; ')}`);
  };
}

const SELINUX_TYPES_V1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_V1_31 = new Set([...SELINUX_TYPES_V1_0, 'container_engine_t']);

const validSeccompType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';

/** Before v1.19 seccomp was set by annotations: only runtime/default, docker/default and localhost/* are allowed. */
const seccompProfileBaselineV1Dot0: CheckPodFn = (metadata, spec) => {
  const annotations = metadata.annotations ?? {};
  const validValue = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden = new Set<string>();
  const podKey = names().annotations.seccompPod;
  if (podKey in annotations && !validValue(annotations[podKey]!)) forbidden.add(`${podKey}=${quoted(annotations[podKey]!)}`);
  for (const c of containersOf(spec)) {
    const key = names().annotations.seccompContainerPrefix + nameOf(c);
    if (key in annotations && !validValue(annotations[key]!)) forbidden.add(`${key}=${quoted(annotations[key]!)}`);
  }
  if (!forbidden.size) return ALLOWED;
  const values = [...forbidden].sort();
  return forbid('seccompProfile', `forbidden ${pluralize('annotation', 'annotations', values.length)} ${values.join(', ')}`);
};

/** The seccompProfile.type set explicitly to something else than RuntimeDefault or Localhost, by the pod or containers. */
function badSeccompSetters(spec: PodSpecView): {setters: string[]; values: string[]; podValid: boolean; unset: string[]} {
  const setters: string[] = [];
  const values: string[] = [];
  let podValid = false;
  const podProfile = podSecurityContext(spec)?.seccompProfile;
  if (podProfile) {
    if (validSeccompType(podProfile.type)) podValid = true;
    else {
      setters.push('pod');
      values.push(String(podProfile.type ?? ''));
    }
  }
  const badContainers: string[] = [];
  const unset: string[] = [];
  for (const c of containersOf(spec)) {
    const profile = securityContext(c)?.seccompProfile;
    if (profile) {
      if (!validSeccompType(profile.type)) {
        badContainers.push(nameOf(c));
        values.push(String(profile.type ?? ''));
      }
    } else unset.push(nameOf(c));
  }
  if (badContainers.length) setters.push(containersPhrase(badContainers));
  return {setters, values, podValid, unset};
}

const seccompProfileBaselineV1Dot19: CheckPodFn = (_metadata, spec) => {
  const {setters, values} = badSeccompSetters(spec);
  if (!setters.length) return ALLOWED;
  return forbid('seccompProfile', `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`);
};

function sysctls(allowed: ReadonlySet<string>): CheckPodFn {
  return (_metadata, spec) => {
    const forbidden = objects(podSecurityContext(spec)?.sysctls).map((s) => String(s.name ?? '')).filter((name) => !allowed.has(name));
    return forbidden.length ? forbid('forbidden sysctls', forbidden.join(', ')) : ALLOWED;
  };
}

const SYSCTLS_V1_0 = new Set([
  'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start',
]);
const SYSCTLS_V1_27 = new Set([...SYSCTLS_V1_0, 'net.ipv4.ip_local_reserved_ports']);
const SYSCTLS_V1_29 = new Set([...SYSCTLS_V1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const SYSCTLS_V1_32 = new Set([...SYSCTLS_V1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']);

const windowsHostProcess: CheckPodFn = (_metadata, spec) => {
  const setters: string[] = [];
  if (podSecurityContext(spec)?.windowsOptions?.hostProcess === true) setters.push('pod');
  const bad = containersOf(spec).filter((c) => securityContext(c)?.windowsOptions?.hostProcess === true).map(nameOf);
  if (bad.length) setters.push(containersPhrase(bad));
  return setters.length ? forbid('hostProcess', `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`) : ALLOWED;
};

// ---------------------------------------------------------------------------------------------
// Restricted

/** From v1.25 a Windows pod (spec.os.name=windows) skips the Linux-only checks. */
function exceptWindows(check: CheckPodFn): CheckPodFn {
  return (metadata, spec) => (isWindowsPod(spec) ? ALLOWED : check(metadata, spec));
}

/** From v1.35 a pod in its own user namespace skips the checks on the user it runs as (KEP-127). */
function exceptUserNamespace(check: CheckPodFn): CheckPodFn {
  return (metadata, spec) => (inUserNamespace(spec) ? ALLOWED : check(metadata, spec));
}

const allowPrivilegeEscalationV1Dot8: CheckPodFn = (_metadata, spec) => {
  const bad = containersOf(spec).filter((c) => securityContext(c)?.allowPrivilegeEscalation !== false).map(nameOf);
  return bad.length ? forbid('allowPrivilegeEscalation != false', `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`) : ALLOWED;
};

const capabilitiesRestrictedV1Dot22: CheckPodFn = (_metadata, spec) => {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps: string[] = [];
  for (const c of containersOf(spec)) {
    const capabilities = securityContext(c)?.capabilities;
    if (!capabilities || typeof capabilities !== 'object') {
      missingDropAll.push(nameOf(c));
      continue;
    }
    if (!strings(capabilities.drop).includes('ALL')) missingDropAll.push(nameOf(c));
    const bad = addedCapabilities(c).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (bad.length) {
      addingForbidden.push(nameOf(c));
      forbiddenCaps.push(...bad);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length) {
    details.push(`${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`);
  }
  return details.length ? forbid('unrestricted capabilities', details.join('; ')) : ALLOWED;
};

/** The inline volume sources restricted allows (image since 1.33, patched into the v1.0 check upstream). */
const ALLOWED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret']);
/** The sources restricted names in its message, in upstream's order; any other is "unknown". */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs',
  'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
];

const restrictedVolumes: CheckPodFn = (_metadata, spec) => {
  const badVolumes: string[] = [];
  const badTypes: string[] = [];
  for (const volume of volumesOf(spec)) {
    const sources = Object.keys(volume).filter((k) => k !== 'name' && (volume as Record<string, unknown>)[k] != null);
    // A volume without a source is an emptyDir once defaulted (upstream's SetDefaults_Volume).
    if (!sources.length || sources.some((s) => ALLOWED_VOLUME_SOURCES.has(s))) continue;
    badVolumes.push(String(volume.name ?? ''));
    badTypes.push(RESTRICTED_VOLUME_SOURCES.find((s) => sources.includes(s)) ?? 'unknown');
  }
  if (!badVolumes.length) return ALLOWED;
  const types = sortedSet(badTypes);
  return forbid(
    'restricted volume types',
    `${pluralize('volume', 'volumes', badVolumes.length)} ${joinQuote(badVolumes)} ${pluralize('uses', 'use', badVolumes.length)} ` +
      `${pluralize('restricted volume type', 'restricted volume types', types.length)} ${joinQuote(types)}`,
  );
};

const runAsNonRootV1Dot0: CheckPodFn = (_metadata, spec) => {
  const badSetters: string[] = [];
  let podRunAsNonRoot = false;
  const podValue = podSecurityContext(spec)?.runAsNonRoot;
  if (podValue === false) badSetters.push('pod');
  else if (podValue === true) podRunAsNonRoot = true;
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  for (const c of containersOf(spec)) {
    const value = securityContext(c)?.runAsNonRoot;
    if (value === false) explicitlyBad.push(nameOf(c));
    else if (value == null && !podRunAsNonRoot) implicitlyBad.push(nameOf(c));
  }
  if (explicitlyBad.length) badSetters.push(containersPhrase(explicitlyBad));
  if (badSetters.length) return forbid('runAsNonRoot != true', `${badSetters.join(' and ')} must not set securityContext.runAsNonRoot=false`);
  if (implicitlyBad.length) return forbid('runAsNonRoot != true', `pod or ${containersPhrase(implicitlyBad)} must set securityContext.runAsNonRoot=true`);
  return ALLOWED;
};

const runAsUserV1Dot23: CheckPodFn = (_metadata, spec) => {
  const badSetters: string[] = [];
  if (podSecurityContext(spec)?.runAsUser === 0) badSetters.push('pod');
  const bad = containersOf(spec).filter((c) => securityContext(c)?.runAsUser === 0).map(nameOf);
  if (bad.length) badSetters.push(containersPhrase(bad));
  return badSetters.length ? forbid('runAsUser=0', `${badSetters.join(' and ')} must not set runAsUser=0`) : ALLOWED;
};

const seccompProfileRestrictedV1Dot19: CheckPodFn = (_metadata, spec) => {
  const {setters, values, podValid, unset} = badSeccompSetters(spec);
  if (setters.length) {
    return forbid('seccompProfile', `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`);
  }
  if (!podValid && unset.length) {
    return forbid('seccompProfile', `pod or ${containersPhrase(unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`);
  }
  return ALLOWED;
};

// ---------------------------------------------------------------------------------------------
// The registry of checks (upstream's DefaultChecks).

export const CHECKS: readonly Check[] = [
  {id: 'appArmorProfile', level: 'baseline', versions: [{minimumVersion: v1(0), check: appArmorProfile}]},
  {id: 'capabilities_baseline', level: 'baseline', versions: [{minimumVersion: v1(0), check: capabilitiesBaseline}]},
  {id: 'hostNamespaces', level: 'baseline', versions: [{minimumVersion: v1(0), check: hostNamespaces}]},
  {id: 'hostPathVolumes', level: 'baseline', versions: [{minimumVersion: v1(0), check: hostPathVolumes}]},
  {id: 'hostPorts', level: 'baseline', versions: [{minimumVersion: v1(0), check: hostPorts}]},
  {id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{minimumVersion: v1(34), check: hostProbesAndHostLifecycle}]},
  {id: 'privileged', level: 'baseline', versions: [{minimumVersion: v1(0), check: privileged}]},
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      {minimumVersion: v1(0), check: procMountStrict},
      {minimumVersion: v1(35), check: procMountBaselineV1Dot35},
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      {minimumVersion: v1(0), check: seLinuxOptions(SELINUX_TYPES_V1_0)},
      {minimumVersion: v1(31), check: seLinuxOptions(SELINUX_TYPES_V1_31)},
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      {minimumVersion: v1(0), check: seccompProfileBaselineV1Dot0},
      {minimumVersion: v1(19), check: seccompProfileBaselineV1Dot19},
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      {minimumVersion: v1(0), check: sysctls(SYSCTLS_V1_0)},
      {minimumVersion: v1(27), check: sysctls(SYSCTLS_V1_27)},
      {minimumVersion: v1(29), check: sysctls(SYSCTLS_V1_29)},
      {minimumVersion: v1(32), check: sysctls(SYSCTLS_V1_32)},
    ],
  },
  {id: 'windowsHostProcess', level: 'baseline', versions: [{minimumVersion: v1(0), check: windowsHostProcess}]},
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      // The field exists since 1.8.
      {minimumVersion: v1(8), check: allowPrivilegeEscalationV1Dot8},
      {minimumVersion: v1(25), check: exceptWindows(allowPrivilegeEscalationV1Dot8)},
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      {minimumVersion: v1(22), check: capabilitiesRestrictedV1Dot22, overrides: ['capabilities_baseline']},
      {minimumVersion: v1(25), check: exceptWindows(capabilitiesRestrictedV1Dot22), overrides: ['capabilities_baseline']},
    ],
  },
  // Restricted keeps the default /proc masks even for user-namespaced pods.
  {id: 'procMount_restricted', level: 'restricted', versions: [{minimumVersion: v1(35), check: procMountStrict, overrides: ['procMount']}]},
  {id: 'restrictedVolumes', level: 'restricted', versions: [{minimumVersion: v1(0), check: restrictedVolumes, overrides: ['hostPathVolumes']}]},
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      {minimumVersion: v1(0), check: runAsNonRootV1Dot0},
      {minimumVersion: v1(35), check: exceptUserNamespace(runAsNonRootV1Dot0)},
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      {minimumVersion: v1(23), check: runAsUserV1Dot23},
      {minimumVersion: v1(35), check: exceptUserNamespace(runAsUserV1Dot23)},
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      {minimumVersion: v1(19), check: seccompProfileRestrictedV1Dot19, overrides: ['seccompProfile_baseline']},
      {minimumVersion: v1(25), check: exceptWindows(seccompProfileRestrictedV1Dot19), overrides: ['seccompProfile_baseline']},
    ],
  },
];
