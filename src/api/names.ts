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
  /** The namespace finalizer the namespace controller owns (`orch`, `kubernetes`). */
  namespaceFinalizer: string;
  /** The product as a title (OpenAPI `info.title`: `orch`, `Kubernetes`). */
  title: string;
  /** The documentation root linked from API descriptions. */
  docsUrl: string;
  /** The agent's configuration file: its apiVersion and kind. */
  agentConfig: {apiVersion: string; kind: string};
  /** The endpointslice controller's `managed-by` value. */
  endpointSliceController: string;
  /** The service IP allocator's `managed-by` value on IPAddress objects (`ipallocator.<domain>`). */
  ipAllocator: string;
  /** The issuer of legacy service account token secrets. */
  legacyTokenIssuer: string;
  /** The config map the root CA publisher puts in every namespace (`orch-root-ca.crt`, `kube-root-ca.crt`). */
  rootCaConfigMap: string;
  /** Where the ServiceAccount admission plugin mounts a pod's token (`/var/run/secrets/<labelDomain>/serviceaccount`). */
  serviceAccountMountPath: string;
  /** The environment variable naming a pod's root: the agent lays out volume mounts below it (no mount namespace). */
  podRootEnv: string;
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
    excludeDisruption: string;
    /** A node's reserved label namespaces an agent may still set (`node.<labelDomain>`, ...). */
    nodeLabelAllowedPrefixes: readonly string[];
    statefulSetPodName: string;
    podIndex: string;
    serviceName: string;
    endpointSliceManagedBy: string;
    endpointSliceSkipMirror: string;
    /** The IP family and owner of an IPAddress object (`ipaddress.<labelDomain>/ip-family`, `/managed-by`). */
    ipAddressFamily: string;
    ipAddressManagedBy: string;
    /** Marks an API server's identity lease (`apiserver.<labelDomain>/identity`, value `<product>-apiserver`). */
    apiserverIdentity: string;
    headlessService: string;
    jobControllerUid: string;
    jobName: string;
    /** The prefix of the PodSecurity namespace labels and audit annotations (`pod-security.<labelDomain>/`). */
    podSecurityPrefix: string;
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
    /** Whether the API server keeps a suggested FlowSchema or PriorityLevelConfiguration's spec (`apf.kubernetes.io/autoupdate-spec`). */
    apfAutoupdateSpec: string;
    deploymentRevision: string;
    deploymentRevisionHistory: string;
    deploymentDesiredReplicas: string;
    deploymentMaxReplicas: string;
    /** The last-applied configuration annotation of the product's own client. */
    lastAppliedConfiguration: string;
    podDeletionCost: string;
    endpointsOverCapacity: string;
    /** Marks Endpoints used as leader-election locks. */
    leaderElectionLock: string;
    /** The `<ip>:<port>` peers proxy to, on an API server's identity lease (`<labelDomain>/peer-advertise-address`). */
    peerAdvertiseAddress: string;
    cronJobScheduledTimestamp: string;
    daemonSetTemplateHash: string;
    /** The bookmark annotation ending a watch-list's initial events (clients look for upstream's key). */
    initialEventsEnd: string;
    /** The claim prefix of legacy service account tokens (`<labelDomain>/serviceaccount/`). */
    serviceAccountClaimPrefix: string;
    /** The deprecated seccomp annotations PodSecurity still checks (policy versions before v1.19). */
    seccompPod: string;
    seccompContainerPrefix: string;
    /** The deprecated AppArmor annotation prefix (one key a container) PodSecurity still checks. */
    appArmorContainerPrefix: string;
  };
  /** `orch fleet` (simulated nodes). */
  fleet: {
    /** Label on every simulated node, valued with the fleet's name: its node watch selects by it. */
    nodeLabel: string;
    /** Annotation a user sets on a simulated node to change its health (NotReady, Silent; absent: Ready). */
    nodeState: string;
  };
  secretTypes: {serviceAccountToken: string; bootstrapToken: string; dockerConfigJson: string; dockercfg: string; basicAuth: string; sshAuth: string; tls: string};
  signers: {apiserverClient: string; apiserverClientKubelet: string; kubeletServing: string; legacyUnknown: string};
  /** The protobuf media type the server answers in (`application/vnd.orch.protobuf`). */
  protobufMediaType: string;
  /** Identifiers the pod admission plugins read or write (upstream's keys under the product's domains). */
  podAdmission: {
    /** LimitRanger's record of the defaults it set (`<labelDomain>/limit-ranger`). */
    limitRangerAnnotation: string;
    /** A service account annotation turning on the mountable secrets check. */
    enforceMountableSecrets: string;
    /** The projected token volume's name prefix (`kube-api-access`). */
    apiAccessVolumePrefix: string;
    /** PodNodeSelector's namespace annotation. */
    nodeSelector: string;
    /** PodTolerationRestriction's namespace annotations and configuration group. */
    defaultTolerations: string;
    tolerationsWhitelist: string;
    tolerationRestrictionGroup: string;
    /** NodeRestriction: the label namespace nodes may never set on themselves. */
    nodeRestrictionLabelNamespace: string;
    /** ImagePolicyWebhook: ImageReview's group, its annotation filter and its failed-open pod annotation. */
    imagePolicyGroup: string;
    imagePolicyAnnotationInfix: string;
    imagePolicyFailedOpen: string;
  };
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
    namespaceFinalizer: k ? 'kubernetes' : 'orch',
    title: k ? 'Kubernetes' : 'orch',
    docsUrl: `https://${labelDomain}/docs`,
    agentConfig: k
      ? {apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration'}
      : {apiVersion: 'agent.config.orch.io/v1beta1', kind: 'AgentConfiguration'},
    endpointSliceController: `endpointslice-controller.${domain}`,
    ipAllocator: `ipallocator.${domain}`,
    legacyTokenIssuer: k ? 'kubernetes/serviceaccount' : 'orch/serviceaccount',
    rootCaConfigMap: `${product}-root-ca.crt`,
    serviceAccountMountPath: `/var/run/secrets/${labelDomain}/serviceaccount`,
    podRootEnv: `${product.toUpperCase()}_POD_ROOT`,
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
      excludeDisruption: `node.${labelDomain}/exclude-disruption`,
      nodeLabelAllowedPrefixes: k ? ['kubelet.kubernetes.io', 'node.kubernetes.io'] : ['agent.orch.io', 'node.orch.io'],
      statefulSetPodName: `statefulset.${labelDomain}/pod-name`,
      podIndex: `apps.${labelDomain}/pod-index`,
      serviceName: `${labelDomain}/service-name`,
      endpointSliceManagedBy: `endpointslice.${labelDomain}/managed-by`,
      endpointSliceSkipMirror: `endpointslice.${labelDomain}/skip-mirror`,
      ipAddressFamily: `ipaddress.${labelDomain}/ip-family`,
      ipAddressManagedBy: `ipaddress.${labelDomain}/managed-by`,
      apiserverIdentity: `apiserver.${labelDomain}/identity`,
      headlessService: `service.${labelDomain}/headless`,
      jobControllerUid: `batch.${labelDomain}/controller-uid`,
      jobName: `batch.${labelDomain}/job-name`,
      podSecurityPrefix: `pod-security.${labelDomain}/`,
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
      apfAutoupdateSpec: g('apf.kubernetes.io/autoupdate-spec', 'apf.orch.io/autoupdate-spec'),
      deploymentRevision: `deployment.${labelDomain}/revision`,
      deploymentRevisionHistory: `deployment.${labelDomain}/revision-history`,
      deploymentDesiredReplicas: `deployment.${labelDomain}/desired-replicas`,
      deploymentMaxReplicas: `deployment.${labelDomain}/max-replicas`,
      lastAppliedConfiguration: g('kubectl.kubernetes.io/last-applied-configuration', 'orch.io/last-applied-configuration'),
      podDeletionCost: `controller.${labelDomain}/pod-deletion-cost`,
      endpointsOverCapacity: `endpoints.${labelDomain}/over-capacity`,
      leaderElectionLock: `control-plane.alpha.${labelDomain}/leader`,
      peerAdvertiseAddress: `${labelDomain}/peer-advertise-address`,
      cronJobScheduledTimestamp: `batch.${labelDomain}/cronjob-scheduled-timestamp`,
      daemonSetTemplateHash: `${labelDomain}/daemonset-template-hash`,
      // Both sets use upstream's key: client-go's watch-list reflector waits for exactly this one.
      initialEventsEnd: 'k8s.io/initial-events-end',
      serviceAccountClaimPrefix: `${labelDomain}/serviceaccount/`,
      seccompPod: `seccomp.security.alpha.${labelDomain}/pod`,
      seccompContainerPrefix: `container.seccomp.security.alpha.${labelDomain}/`,
      appArmorContainerPrefix: `container.apparmor.security.beta.${labelDomain}/`,
    },
    fleet: {
      nodeLabel: `fleet.${labelDomain}/name`,
      nodeState: `fleet.${labelDomain}/state`,
    },
    secretTypes: {
      serviceAccountToken: `${labelDomain}/service-account-token`,
      bootstrapToken: `bootstrap.${labelDomain}/token`,
      dockerConfigJson: `${labelDomain}/dockerconfigjson`,
      dockercfg: `${labelDomain}/dockercfg`,
      basicAuth: `${labelDomain}/basic-auth`,
      sshAuth: `${labelDomain}/ssh-auth`,
      tls: `${labelDomain}/tls`,
    },
    signers: {
      apiserverClient: `${labelDomain}/${product}-apiserver-client`,
      apiserverClientKubelet: g('kubernetes.io/kube-apiserver-client-kubelet', 'orch.io/orch-apiserver-client-agent'),
      kubeletServing: g('kubernetes.io/kubelet-serving', 'orch.io/agent-serving'),
      legacyUnknown: `${labelDomain}/legacy-unknown`,
    },
    protobufMediaType: k ? 'application/vnd.kubernetes.protobuf' : 'application/vnd.orch.protobuf',
    podAdmission: {
      limitRangerAnnotation: `${labelDomain}/limit-ranger`,
      enforceMountableSecrets: `${labelDomain}/enforce-mountable-secrets`,
      apiAccessVolumePrefix: `${product}-api-access`,
      nodeSelector: `scheduler.alpha.${labelDomain}/node-selector`,
      defaultTolerations: `scheduler.alpha.${labelDomain}/defaultTolerations`,
      tolerationsWhitelist: `scheduler.alpha.${labelDomain}/tolerationsWhitelist`,
      tolerationRestrictionGroup: `podtolerationrestriction.admission.${domain}`,
      nodeRestrictionLabelNamespace: `node-restriction.${labelDomain}`,
      imagePolicyGroup: `imagepolicy.${domain}`,
      imagePolicyAnnotationInfix: `.image-policy.${domain}/`,
      imagePolicyFailedOpen: `alpha.image-policy.${domain}/failed-open`,
    },
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

/**
 * A value computed from the active name set, once per set: for tables and sets that modules used to
 * build at import time (they must not read names() then) and that hot paths read often.
 */
export function perNameSet<T>(build: (n: NameSet) => T): () => T {
  const memo = new Map<NameSetId, T>();
  return () => {
    let value = memo.get(active.id);
    if (value === undefined) memo.set(active.id, (value = build(active)));
    return value;
  };
}

/** Parses `--names`; the error names the option and the accepted values. */
export function parseNameSetId(value: string): NameSetId {
  if ((NAME_SET_IDS as readonly string[]).includes(value)) return value as NameSetId;
  throw new Error(`invalid value "${value}" for --names: accepted values are ${NAME_SET_IDS.join(', ')}`);
}
