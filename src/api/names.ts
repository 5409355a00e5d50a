/**
 * Every product identifier, defined once (DESIGN.md decision 2): API group domain, system
 * namespaces and their objects, lease names, users and groups of the components, label,
 * annotation and taint keys, secret types, signer names, the protobuf media type.
 *
 * Two name sets: the seed's (`orch`, `orch.io`, the default) and upstream's (`kubernetes`,
 * `k8s.io`), chosen once per process by `--names orch|kubernetes` (every daemon and `orch up`
 * take it). One process serves one cluster, so the choice is process-wide: `selectNames()` is
 * called by a command before it builds a daemon, and every module reads `names()` when it needs a
 * name (never at import time, so the selection made at start-up is the one in effect).
 */

export type NameSetId = 'orch' | 'kubernetes';

export const NAME_SET_IDS: readonly NameSetId[] = ['orch', 'kubernetes'];

export interface NameSet {
  id: NameSetId;
  /** The product as it names itself in identifiers (`orch`, `kube`). */
  product: string;
  /** The reserved domain of API groups (`orch.io`, `k8s.io`). */
  domain: string;
  /** The reserved domain of label, annotation and taint keys (`orch.io`, `kubernetes.io`). */
  labelDomain: string;
  namespaces: {system: string; public: string; nodeLease: string};
  /** The default service in the default namespace (`orch`, `kubernetes`). */
  defaultService: string;
  groups: {
    admissionregistration: string;
    apiextensions: string;
    apiregistration: string;
    audit: string;
    authentication: string;
    authorization: string;
    certificates: string;
    coordination: string;
    discovery: string;
    events: string;
    flowcontrol: string;
    internal: string;
    meta: string;
    metrics: string;
    networking: string;
    node: string;
    rbac: string;
    resource: string;
    scheduling: string;
    storage: string;
    storagemigration: string;
    agentConfig: string;
  };
  leases: {controllerManager: string; scheduler: string};
  users: {controllerManager: string; scheduler: string; nodePrefix: string; nodesGroup: string};
  labels: {
    hostname: string;
    os: string;
    arch: string;
    zone: string;
    region: string;
    instanceType: string;
    betaOs: string;
    betaArch: string;
    betaInstanceType: string;
    failureDomainZone: string;
    failureDomainRegion: string;
    nodeRolePrefix: string;
    metadataName: string;
    /** `<labelDomain>/bootstrapping` on the default RBAC objects. */
    bootstrapping: string;
  };
  taints: {
    notReady: string;
    unreachable: string;
    unschedulable: string;
    memoryPressure: string;
    diskPressure: string;
    pidPressure: string;
    networkUnavailable: string;
    outOfService: string;
  };
  annotations: {
    mirrorPod: string;
    configSource: string;
    configSeen: string;
    configHash: string;
    serviceAccountName: string;
    serviceAccountUid: string;
    rbacAutoupdate: string;
  };
  secretTypes: {serviceAccountToken: string; bootstrapToken: string; dockerConfigJson: string; tls: string};
  signers: {apiserverClient: string; apiserverClientKubelet: string; kubeletServing: string; legacyUnknown: string};
  /** The protobuf media type the server answers in (`application/vnd.orch.protobuf`). */
  protobufMediaType: string;
}

function build(id: NameSetId): NameSet {
  const k = id === 'kubernetes';
  const domain = k ? 'k8s.io' : 'orch.io';
  const labelDomain = k ? 'kubernetes.io' : 'orch.io';
  const product = k ? 'kube' : 'orch';
  const g = (upstream: string, orch: string) => (k ? upstream : orch);
  return {
    id,
    product,
    domain,
    labelDomain,
    namespaces: {system: `${product}-system`, public: `${product}-public`, nodeLease: `${product}-node-lease`},
    defaultService: k ? 'kubernetes' : 'orch',
    groups: {
      admissionregistration: `admissionregistration.${domain}`,
      apiextensions: `apiextensions.${domain}`,
      apiregistration: `apiregistration.${domain}`,
      audit: `audit.${domain}`,
      authentication: `authentication.${domain}`,
      authorization: `authorization.${domain}`,
      certificates: `certificates.${domain}`,
      coordination: `coordination.${domain}`,
      discovery: `discovery.${domain}`,
      events: `events.${domain}`,
      flowcontrol: `flowcontrol.apiserver.${domain}`,
      internal: `internal.apiserver.${domain}`,
      meta: `meta.${domain}`,
      metrics: `metrics.${domain}`,
      networking: `networking.${domain}`,
      node: `node.${domain}`,
      rbac: g('rbac.authorization.k8s.io', 'rbac.orch.io'),
      resource: `resource.${domain}`,
      scheduling: `scheduling.${domain}`,
      storage: `storage.${domain}`,
      storagemigration: `storagemigration.${domain}`,
      agentConfig: g('kubelet.config.k8s.io', 'agent.config.orch.io'),
    },
    leases: {controllerManager: `${product}-controller-manager`, scheduler: `${product}-scheduler`},
    users: {
      controllerManager: `system:${product}-controller-manager`,
      scheduler: `system:${product}-scheduler`,
      nodePrefix: 'system:node:',
      nodesGroup: 'system:nodes',
    },
    labels: {
      hostname: `${labelDomain}/hostname`,
      os: `${labelDomain}/os`,
      arch: `${labelDomain}/arch`,
      zone: `topology.${labelDomain}/zone`,
      region: `topology.${labelDomain}/region`,
      instanceType: `node.${labelDomain}/instance-type`,
      betaOs: `beta.${labelDomain}/os`,
      betaArch: `beta.${labelDomain}/arch`,
      betaInstanceType: `beta.${labelDomain}/instance-type`,
      failureDomainZone: `failure-domain.beta.${labelDomain}/zone`,
      failureDomainRegion: `failure-domain.beta.${labelDomain}/region`,
      nodeRolePrefix: `node-role.${labelDomain}/`,
      metadataName: `${labelDomain}/metadata.name`,
      bootstrapping: `${labelDomain}/bootstrapping`,
    },
    taints: {
      notReady: `node.${labelDomain}/not-ready`,
      unreachable: `node.${labelDomain}/unreachable`,
      unschedulable: `node.${labelDomain}/unschedulable`,
      memoryPressure: `node.${labelDomain}/memory-pressure`,
      diskPressure: `node.${labelDomain}/disk-pressure`,
      pidPressure: `node.${labelDomain}/pid-pressure`,
      networkUnavailable: `node.${labelDomain}/network-unavailable`,
      outOfService: `node.${labelDomain}/out-of-service`,
    },
    annotations: {
      mirrorPod: `${labelDomain}/config.mirror`,
      configSource: `${labelDomain}/config.source`,
      configSeen: `${labelDomain}/config.seen`,
      configHash: `${labelDomain}/config.hash`,
      serviceAccountName: `${labelDomain}/service-account.name`,
      serviceAccountUid: `${labelDomain}/service-account.uid`,
      rbacAutoupdate: g('rbac.authorization.kubernetes.io/autoupdate', 'rbac.orch.io/autoupdate'),
    },
    secretTypes: {
      serviceAccountToken: `${labelDomain}/service-account-token`,
      bootstrapToken: `bootstrap.${labelDomain}/token`,
      dockerConfigJson: `${labelDomain}/dockerconfigjson`,
      tls: `${labelDomain}/tls`,
    },
    signers: {
      apiserverClient: `${labelDomain}/${product}-apiserver-client`,
      apiserverClientKubelet: g('kubernetes.io/kube-apiserver-client-kubelet', 'orch.io/orch-apiserver-client-agent'),
      kubeletServing: g('kubernetes.io/kubelet-serving', 'orch.io/agent-serving'),
      legacyUnknown: `${labelDomain}/legacy-unknown`,
    },
    protobufMediaType: k ? 'application/vnd.kubernetes.protobuf' : 'application/vnd.orch.protobuf',
  };
}

const SETS: Record<NameSetId, NameSet> = {orch: build('orch'), kubernetes: build('kubernetes')};

let active: NameSet = SETS.orch;

/** The name set in effect in this process. */
export function names(): NameSet {
  return active;
}

/** A name set by id, without selecting it. */
export function nameSet(id: NameSetId): NameSet {
  return SETS[id];
}

/** Selects the process's name set (a command does it once, before it builds a daemon). */
export function selectNames(id: NameSetId): NameSet {
  active = SETS[id];
  return active;
}

/** Parses `--names`; the error names the option and the accepted values. */
export function parseNameSetId(value: string): NameSetId {
  if ((NAME_SET_IDS as readonly string[]).includes(value)) return value as NameSetId;
  throw new Error(`invalid value "${value}" for --names: accepted values are ${NAME_SET_IDS.join(', ')}`);
}
