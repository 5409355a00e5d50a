/**
 * Feature gates as upstream's component-base featuregate package keeps them: every gate of the
 * release orch emulates with its versioned specs (the stage and default it had from each release
 * on), LockToDefault, the gates' dependencies, `--feature-gates` validation with upstream's errors
 * and warnings, and `enabled(name)` for the daemons to read.
 *
 * Pure and free of daemon imports: `orch patch` and the option table load this file.
 *
 * The table is upstream's defaultVersionedKubernetesFeatureGates (pkg/features/kube_features.go,
 * which also lists the generic API server's, apiextensions' and controller-manager's gates), taken at
 * the 1.36 development line, plus component-base's logging gates (the seed's logging options name
 * LoggingAlphaOptions) and the two special gates AllAlpha and AllBeta.
 */

export type PreRelease = 'Alpha' | 'Beta' | 'GA' | 'Deprecated' | 'PreAlpha';

export interface FeatureSpec {
  /** The release (major.minor) from which this spec holds. */
  version: MinorVersion;
  default: boolean;
  preRelease: PreRelease;
  lockToDefault: boolean;
}

export interface MinorVersion {
  major: number;
  minor: number;
}

/**
 * The specs, compactly: `<version><stage>[!]` per release, oldest first. Stages: a/A Alpha off/on,
 * b/B Beta off/on, g/G GA off/on, d/D Deprecated off/on; `!` is LockToDefault.
 */
const SPECS: Record<string, string> = {
  AllAlpha: '0.0a',
  AllBeta: '0.0b',
  AllowDNSOnlyNodeCSR: '1.0G 1.31d',
  AllowInsecureKubeletCertificateSigningRequests: '1.0G 1.31d',
  AllowOverwriteTerminationGracePeriodSeconds: '1.0G 1.32d 1.35d!',
  AnyVolumeDataSource: '1.18a 1.24B 1.33G!',
  AuthorizeNodeWithSelectors: '1.31a 1.32B 1.34G!',
  AuthorizePodWebsocketUpgradeCreatePermission: '1.35B',
  CustomCPUCFSQuotaPeriod: '1.12a',
  CPUManagerPolicyAlphaOptions: '1.23a',
  CPUManagerPolicyBetaOptions: '1.23B',
  CPUManagerPolicyOptions: '1.22a 1.23B 1.33G!',
  CSIMigrationPortworx: '1.23a 1.25b 1.31B 1.33G!',
  CSIServiceAccountTokenSecrets: '1.35B',
  CSIVolumeHealth: '1.21a',
  ChangeContainerStatusOnKubeletRestart: '1.0G 1.35d',
  ClearingNominatedNodeNameAfterBinding: '1.34a 1.35B',
  ClusterTrustBundle: '1.27a 1.33b',
  ClusterTrustBundleProjection: '1.29a 1.33b',
  ContainerCheckpoint: '1.25a 1.30B',
  ContainerRestartRules: '1.34a 1.35B',
  ContainerStopSignals: '1.33a',
  CrossNamespaceVolumeDataSource: '1.26a',
  DRAAdminAccess: '1.32a 1.34B 1.36G!',
  DRAConsumableCapacity: '1.34a 1.36B',
  DRADeviceBindingConditions: '1.34a',
  DRADeviceTaintRules: '1.35a',
  DRADeviceTaints: '1.33a 1.36B',
  DRAExtendedResource: '1.34a',
  DRAPartitionableDevices: '1.33a',
  DRAPrioritizedList: '1.33a 1.34B',
  DRAResourceClaimDeviceStatus: '1.32a 1.33B',
  DRASchedulerFilterTimeout: '1.34B',
  DeploymentReplicaSetTerminatingReplicas: '1.33a 1.35B',
  DisableAllocatorDualWrite: '1.31a 1.33b 1.34G 1.35G!',
  DisableCPUQuotaWithExclusiveCPUs: '1.33B',
  DisableNodeKubeProxyVersion: '1.29a 1.31d 1.33D',
  DynamicResourceAllocation: '1.26a 1.32b 1.34G 1.35G!',
  EnvFiles: '1.34a 1.35B',
  EventedPLEG: '1.26a',
  ExecProbeTimeout: '1.20G 1.35G!',
  ExternalServiceAccountTokenSigner: '1.32a 1.34B',
  GangScheduling: '1.35a',
  GenericWorkload: '1.35a',
  GitRepoVolumeDriver: '1.0G 1.33d',
  GracefulNodeShutdown: '1.20a 1.21B',
  GracefulNodeShutdownBasedOnPodPriority: '1.23a 1.24B',
  HPAConfigurableTolerance: '1.33a 1.35B',
  HPAScaleToZero: '1.16a',
  HonorPVReclaimPolicy: '1.23a 1.31B 1.33G!',
  HostnameOverride: '1.34a 1.35B',
  ImageMaximumGCAge: '1.29a 1.30B 1.35G!',
  ImageVolume: '1.31a 1.33b 1.35B',
  ImageVolumeWithDigest: '1.35a',
  InPlacePodLevelResourcesVerticalScaling: '1.35a',
  InPlacePodVerticalScaling: '1.27a 1.33B 1.35G!',
  InPlacePodVerticalScalingAllocatedStatus: '1.32a 1.33d',
  InPlacePodVerticalScalingExclusiveCPUs: '1.32a',
  InPlacePodVerticalScalingExclusiveMemory: '1.34a',
  InTreePluginPortworxUnregister: '1.23a',
  JobBackoffLimitPerIndex: '1.28a 1.29B 1.33G!',
  JobManagedBy: '1.30a 1.32B 1.35G!',
  JobPodReplacementPolicy: '1.28a 1.29B 1.34G!',
  JobSuccessPolicy: '1.30a 1.31B 1.33G!',
  KubeletCgroupDriverFromCRI: '1.28a 1.31B 1.34G!',
  KubeletCrashLoopBackOffMax: '1.32a 1.35B',
  KubeletEnsureSecretPulledImages: '1.33a 1.35B',
  KubeletFineGrainedAuthz: '1.32a 1.33B',
  KubeletInUserNamespace: '1.22a',
  KubeletPSI: '1.33a 1.34B',
  KubeletPodResourcesDynamicResources: '1.27a 1.34B',
  KubeletPodResourcesGet: '1.27a 1.34B',
  KubeletPodResourcesListUseActivePods: '1.0g 1.34D',
  KubeletRegistrationGetOnExistsOnly: '1.0G 1.32d',
  KubeletSeparateDiskGC: '1.29a 1.31B',
  KubeletServiceAccountTokenForCredentialProviders: '1.33a 1.34B',
  KubeletTracing: '1.25a 1.27B 1.34G!',
  LocalStorageCapacityIsolationFSQuotaMonitoring: '1.15a 1.31b',
  LogarithmicScaleDown: '1.21a 1.22B 1.31G!',
  MatchLabelKeysInPodAffinity: '1.29a 1.31B 1.33G!',
  MatchLabelKeysInPodTopologySpread: '1.25a 1.27B',
  MatchLabelKeysInPodTopologySpreadSelectorMerge: '1.34B',
  MaxUnavailableStatefulSet: '1.24a 1.35B',
  MemoryManager: '1.21a 1.22B 1.32G!',
  MemoryQoS: '1.22a',
  MultiCIDRServiceAllocator: '1.27a 1.31b 1.33G 1.34G!',
  MutableCSINodeAllocatableCount: '1.33a 1.34b 1.35B',
  MutablePVNodeAffinity: '1.35a',
  MutablePodResourcesForSuspendedJobs: '1.35a',
  MutableSchedulingDirectivesForSuspendedJobs: '1.35a',
  NFTablesProxyMode: '1.29a 1.31B 1.33G!',
  NodeDeclaredFeatures: '1.35a',
  NodeInclusionPolicyInPodTopologySpread: '1.25a 1.26B 1.33G!',
  NodeLogQuery: '1.27a 1.30b',
  NodeSwap: '1.22a 1.28b 1.30B 1.34G!',
  NominatedNodeNameForExpectation: '1.34a 1.35B',
  OpportunisticBatching: '1.35B',
  OrderedNamespaceDeletion: '1.30b 1.33B 1.34G!',
  PodAndContainerStatsFromCRI: '1.23a',
  PodCertificateRequest: '1.34a 1.35b',
  PodDeletionCost: '1.21a 1.22B',
  PodLevelResources: '1.32a 1.34B',
  PodLifecycleSleepAction: '1.29a 1.30B 1.34G!',
  PodLifecycleSleepActionAllowZero: '1.32a 1.33B 1.34G!',
  PodLogsQuerySplitStreams: '1.32a',
  PodObservedGenerationTracking: '1.33a 1.34B 1.35G!',
  PodReadyToStartContainersCondition: '1.28a 1.29B',
  PodSchedulingReadiness: '1.26a 1.27B 1.30G!',
  PodTopologyLabelsAdmission: '1.33a 1.35B',
  PortForwardWebsockets: '1.30a 1.31B',
  PreferSameTrafficDistribution: '1.33a 1.34B 1.35G!',
  PreventStaticPodAPIReferences: '1.34B',
  ProcMountType: '1.12a 1.31b 1.33B',
  QOSReserved: '1.11a',
  RecoverVolumeExpansionFailure: '1.23a 1.32B 1.34G!',
  RecursiveReadOnlyMounts: '1.30a 1.31B 1.33G!',
  ReduceDefaultCrashLoopBackOffDecay: '1.33a',
  RelaxedDNSSearchValidation: '1.32a 1.33B 1.34G!',
  RelaxedEnvironmentVariableValidation: '1.30a 1.32B 1.34G!',
  RelaxedServiceNameValidation: '1.34a',
  ReloadKubeletClientCAFile: '1.36B',
  ReloadKubeletServerCertificateFile: '1.31B',
  ResourceHealthStatus: '1.31a',
  RestartAllContainersOnContainerExits: '1.35a',
  RotateKubeletServerCertificate: '1.7a 1.12B',
  RuntimeClassInImageCriAPI: '1.29a',
  SELinuxChangePolicy: '1.32a 1.33B',
  SELinuxMount: '1.30a 1.33b',
  SELinuxMountReadWriteOncePod: '1.25a 1.27b 1.28B',
  SchedulerAsyncAPICalls: '1.34b',
  SchedulerAsyncPreemption: '1.32a 1.33B',
  SchedulerPopFromBackoffQ: '1.33B',
  SchedulerQueueingHints: '1.28b 1.32B 1.34G!',
  SeparateTaintEvictionController: '1.29B 1.34G!',
  ServiceAccountNodeAudienceRestriction: '1.32b 1.33B',
  ServiceAccountTokenJTI: '1.29a 1.30B 1.32G!',
  ServiceAccountTokenNodeBinding: '1.29a 1.31B 1.33G!',
  ServiceAccountTokenNodeBindingValidation: '1.29a 1.30B 1.32G!',
  ServiceAccountTokenPodNodeInfo: '1.29a 1.30B 1.32G!',
  ServiceTrafficDistribution: '1.30a 1.31B 1.33G!',
  SidecarContainers: '1.28a 1.29B 1.33G!',
  StatefulSetSemanticRevisionComparison: '1.0B',
  StorageCapacityScoring: '1.33a',
  StorageNamespaceIndex: '1.30B 1.33D',
  StorageVersionMigrator: '1.30a 1.35b',
  StreamingCollectionEncodingToJSON: '1.33B 1.34G!',
  StreamingCollectionEncodingToProtobuf: '1.33B 1.34G!',
  StrictIPCIDRValidation: '1.33a',
  SupplementalGroupsPolicy: '1.31a 1.33B 1.35G!',
  SystemdWatchdog: '1.32B 1.35G!',
  TaintTolerationComparisonOperators: '1.35a',
  TopologyAwareHints: '1.21a 1.23b 1.24B 1.33G!',
  TopologyManagerPolicyAlphaOptions: '1.26a',
  TopologyManagerPolicyBetaOptions: '1.26b 1.28B',
  TopologyManagerPolicyOptions: '1.26a 1.28B 1.32G',
  TranslateStreamCloseWebsocketRequests: '1.29a 1.30B',
  UserNamespacesHostNetworkSupport: '1.35a',
  UserNamespacesSupport: '1.25a 1.30b 1.33B',
  VolumeAttributesClass: '1.29a 1.31b 1.34G 1.36G!',
  VolumeLimitScaling: '1.35a',
  WinDSR: '1.14a 1.33B 1.34G!',
  WinOverlay: '1.14a 1.20B 1.34G!',
  WindowsCPUAndMemoryAffinity: '1.32a',
  WindowsGracefulNodeShutdown: '1.32a 1.34B',
  WindowsHostNetwork: '1.26a 1.33d',
  // apiextensions-apiserver
  CRDObservedGenerationTracking: '1.35b',
  CRDValidationRatcheting: '1.28a 1.30B 1.33G!',
  CustomResourceFieldSelectors: '1.30a 1.31B 1.32G!',
  // the generic API server (k8s.io/apiserver)
  APIResponseCompression: '1.8a 1.16B',
  APIServerIdentity: '1.20a 1.26B',
  APIServerTracing: '1.22a 1.27B 1.34G!',
  APIServingWithRoutine: '1.30a',
  AggregatedDiscoveryRemoveBetaType: '1.0g 1.33D 1.35D!',
  AllowParsingUserUIDFromCertAuth: '1.33B',
  AllowUnsafeMalformedObjectDeletion: '1.32a',
  AnonymousAuthConfigurableEndpoints: '1.31a 1.32B 1.34G!',
  AuthorizeWithSelectors: '1.31a 1.32B 1.34G!',
  BtreeWatchCache: '1.32B 1.33G!',
  CBORServingAndStorage: '1.32a',
  ConcurrentWatchObjectDecode: '1.31b',
  ConsistentListFromCache: '1.28a 1.31B 1.34G!',
  ConstrainedImpersonation: '1.35a',
  CoordinatedLeaderElection: '1.31a 1.33b',
  DeclarativeValidation: '1.33B',
  DeclarativeValidationTakeover: '1.33b',
  DetectCacheInconsistency: '1.34B',
  KMSv1: '1.0G 1.28D 1.29d',
  ListFromCacheSnapshot: '1.33a 1.34B',
  MutatingAdmissionPolicy: '1.32a 1.34b',
  OpenAPIEnums: '1.23a 1.24B',
  RemoteRequestHeaderUID: '1.32a 1.33B',
  ResilientWatchCacheInitialization: '1.31B 1.34G!',
  RetryGenerateName: '1.30a 1.31B 1.32G!',
  SeparateCacheWatchRPC: '1.28B 1.33d',
  SizeBasedListCostEstimate: '1.34B',
  StorageVersionAPI: '1.20a',
  StorageVersionHash: '1.14a 1.15B',
  StructuredAuthenticationConfiguration: '1.29a 1.30B 1.34G!',
  StructuredAuthenticationConfigurationEgressSelector: '1.34B',
  StructuredAuthenticationConfigurationJWKSMetrics: '1.35B',
  StructuredAuthorizationConfiguration: '1.29a 1.30B 1.32G!',
  TokenRequestServiceAccountUIDValidation: '1.34B',
  UnauthenticatedHTTP2DOSMitigation: '1.25b 1.29B',
  UnknownVersionInteroperabilityProxy: '1.28a',
  WatchCacheInitializationPostStartHook: '1.31b',
  WatchFromStorageWithoutResourceVersion: '1.27b 1.33d!',
  WatchList: '1.27a 1.32B 1.33b 1.34B',
  // controller-manager and component-base (zpages, logs)
  CloudControllerManagerWatchBasedRoutesReconciliation: '1.35a',
  CloudControllerManagerWebhook: '1.27a',
  ComponentFlagz: '1.32a',
  ComponentStatusz: '1.32a 1.36B',
  ContextualLogging: '1.24a 1.30B',
  LoggingAlphaOptions: '1.24a',
  LoggingBetaOptions: '1.24B',
};

/** Upstream's defaultKubernetesFeatureGateDependencies, the non-empty entries. */
const DEPENDENCIES: Record<string, string[]> = {
  AuthorizeNodeWithSelectors: ['AuthorizeWithSelectors'],
  ClusterTrustBundleProjection: ['ClusterTrustBundle'],
  DRAAdminAccess: ['DynamicResourceAllocation'],
  DRAConsumableCapacity: ['DynamicResourceAllocation'],
  DRADeviceBindingConditions: ['DRAResourceClaimDeviceStatus', 'DynamicResourceAllocation'],
  DRADeviceTaintRules: ['DRADeviceTaints'],
  DRADeviceTaints: ['DynamicResourceAllocation'],
  DRAExtendedResource: ['DynamicResourceAllocation'],
  DRAPartitionableDevices: ['DynamicResourceAllocation'],
  DRAPrioritizedList: ['DynamicResourceAllocation'],
  DRASchedulerFilterTimeout: ['DynamicResourceAllocation'],
  DisableAllocatorDualWrite: ['MultiCIDRServiceAllocator'],
  GangScheduling: ['GenericWorkload'],
  GracefulNodeShutdownBasedOnPodPriority: ['GracefulNodeShutdown'],
  ImageVolumeWithDigest: ['ImageVolume'],
  InPlacePodLevelResourcesVerticalScaling: ['InPlacePodVerticalScaling', 'NodeDeclaredFeatures', 'PodLevelResources'],
  InPlacePodVerticalScalingAllocatedStatus: ['InPlacePodVerticalScaling'],
  InPlacePodVerticalScalingExclusiveCPUs: ['InPlacePodVerticalScaling'],
  InPlacePodVerticalScalingExclusiveMemory: ['InPlacePodVerticalScaling', 'MemoryManager'],
  MatchLabelKeysInPodTopologySpreadSelectorMerge: ['MatchLabelKeysInPodTopologySpread'],
  PodCertificateRequest: ['AuthorizeNodeWithSelectors'],
  PodLifecycleSleepActionAllowZero: ['PodLifecycleSleepAction'],
  ProcMountType: ['UserNamespacesSupport'],
  ResourceHealthStatus: ['DynamicResourceAllocation'],
  RestartAllContainersOnContainerExits: ['ContainerRestartRules', 'NodeDeclaredFeatures'],
  ServiceAccountTokenNodeBinding: ['ServiceAccountTokenNodeBindingValidation'],
  UserNamespacesHostNetworkSupport: ['UserNamespacesSupport'],
  WindowsCPUAndMemoryAffinity: ['MemoryManager'],
  WindowsGracefulNodeShutdown: ['GracefulNodeShutdown'],
  DeclarativeValidationTakeover: ['DeclarativeValidation'],
  StorageVersionAPI: ['APIServerIdentity'],
  StructuredAuthenticationConfigurationEgressSelector: ['StructuredAuthenticationConfiguration'],
  StructuredAuthenticationConfigurationJWKSMetrics: ['StructuredAuthenticationConfiguration'],
  UnknownVersionInteroperabilityProxy: ['APIServerIdentity'],
};

const STAGES: Record<string, [PreRelease, boolean]> = {
  a: ['Alpha', false], A: ['Alpha', true], b: ['Beta', false], B: ['Beta', true],
  g: ['GA', false], G: ['GA', true], d: ['Deprecated', false], D: ['Deprecated', true],
};

function decode(text: string): FeatureSpec[] {
  return text.split(' ').map((entry) => {
    const match = /^(\d+)\.(\d+)([aAbBgGdD])(!?)$/.exec(entry);
    if (!match) throw new Error(`feature gate table: bad entry ${entry}`);
    const [preRelease, dflt] = STAGES[match[3]!]!;
    return {version: {major: Number(match[1]), minor: Number(match[2])}, default: dflt, preRelease, lockToDefault: match[4] === '!'};
  });
}

let known: Map<string, FeatureSpec[]> | undefined;

/** Every known gate with its versioned specs, oldest first. */
export function knownFeatureGates(): ReadonlyMap<string, readonly FeatureSpec[]> {
  known ??= new Map(Object.entries(SPECS).map(([name, text]) => [name, decode(text)]));
  return known;
}

export function compareVersions(a: MinorVersion, b: MinorVersion): number {
  return a.major - b.major || a.minor - b.minor;
}

export function formatVersion(v: MinorVersion): string {
  return `${v.major}.${v.minor}`;
}

/**
 * upstream's featureSpecAtEmulationVersion: the last spec at or before the version; before the
 * first one the gate is PreAlpha (off, and cannot be set).
 */
export function specAt(specs: readonly FeatureSpec[], at: MinorVersion): FeatureSpec {
  let found: FeatureSpec | undefined;
  for (const spec of specs) if (compareVersions(spec.version, at) <= 0) found = spec;
  return found ?? {version: at, default: false, preRelease: 'PreAlpha', lockToDefault: false};
}

/** A `--feature-gates` value upstream refuses (the message is upstream's). */
export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

/** The component `--feature-gates` keys may name (`kube:Name=true`); unprefixed keys are kube's. */
const COMPONENT = 'kube';

export interface FeatureGatesOptions {
  /** The release whose specs apply (--emulated-version); the emulated release by default. */
  emulationVersion: MinorVersion;
}

/** The gates of one component, resolved at one emulation version: what the daemons read. */
export class FeatureGates {
  /** upstream's klog warnings for settings it accepts but frowns on (GA and deprecated gates). */
  readonly warnings: string[] = [];
  private readonly values = new Map<string, boolean>();
  private readonly explicit = new Set<string>();

  /**
   * Validates as upstream's featureGate.SetFromMap: the first unknown gate stops everything;
   * locked gates set to a non-default and PreAlpha gates are errors; then the dependencies of
   * every enabled gate must be enabled too. All errors are reported together.
   */
  constructor(settings: Readonly<Record<string, boolean>>, readonly options: FeatureGatesOptions) {
    const gates = knownFeatureGates();
    const at = options.emulationVersion;
    const errors: string[] = [];
    for (const [rawKey, value] of Object.entries(settings)) {
      const key = stripComponent(rawKey);
      const specs = gates.get(key);
      if (!specs) throw new FeatureGateError(`unrecognized feature gate: ${key}`);
      const spec = specAt(specs, at);
      if (spec.lockToDefault && spec.default !== value) {
        errors.push(`cannot set feature gate ${key} to ${value}, feature is locked to ${spec.default}`);
        continue;
      }
      if (key === 'AllAlpha' || key === 'AllBeta') {
        const stage: PreRelease = key === 'AllAlpha' ? 'Alpha' : 'Beta';
        for (const [name, s] of gates) {
          if (name === 'AllAlpha' || name === 'AllBeta' || this.values.has(name)) continue;
          if (specAt(s, at).preRelease === stage) this.values.set(name, value);
        }
        this.values.set(key, value);
        this.explicit.add(key);
        continue;
      }
      if (spec.preRelease === 'PreAlpha') {
        errors.push(`cannot set feature gate ${key} to ${value}, feature is PreAlpha at emulated version ${formatVersion(at)}`);
        continue;
      }
      this.values.set(key, value);
      this.explicit.add(key);
      if (spec.preRelease === 'Deprecated') this.warnings.push(`Setting deprecated feature gate ${key}=${value}. It will be removed in a future release.`);
      else if (spec.preRelease === 'GA') this.warnings.push(`Setting GA feature gate ${key}=${value}. It will be removed in a future release.`);
    }
    if (errors.length === 0) {
      for (const [feature, deps] of Object.entries(DEPENDENCIES)) {
        if (!this.enabled(feature)) continue;
        const disabled = deps.filter((d) => !this.enabled(d));
        if (disabled.length > 0) errors.push(`${feature} is enabled, but depends on features that are disabled: [${disabled.join(' ')}]`);
      }
    }
    if (errors.length === 1) throw new FeatureGateError(errors[0]!);
    // upstream's utilerrors aggregate: "[a, b]" for more than one.
    if (errors.length > 1) throw new FeatureGateError(`[${errors.join(', ')}]`);
  }

  /** Whether a gate is on: set explicitly, or its default at the emulation version. Unknown gates throw, as upstream panics. */
  enabled(name: string): boolean {
    const value = this.values.get(name);
    if (value !== undefined) return value;
    const specs = knownFeatureGates().get(name);
    if (!specs) throw new Error(`feature "${name}" is not registered in FeatureGate`);
    return specAt(specs, this.options.emulationVersion).default;
  }

  explicitlySet(name: string): boolean {
    return this.explicit.has(name);
  }

  /** The spec that applies to a gate at the emulation version. */
  spec(name: string): FeatureSpec | undefined {
    const specs = knownFeatureGates().get(name);
    return specs && specAt(specs, this.options.emulationVersion);
  }

  /** upstream's KnownFeatures(): `Name=true|false (STAGE - default=x)` for every settable gate, sorted. */
  describe(): string[] {
    const lines: string[] = [];
    for (const [name, specs] of knownFeatureGates()) {
      const spec = specAt(specs, this.options.emulationVersion);
      if (spec.preRelease === 'GA' || spec.preRelease === 'PreAlpha' || spec.lockToDefault) continue;
      const stage = name === 'AllAlpha' || name === 'AllBeta' ? `${spec.preRelease.toUpperCase()} - default=false` : `${spec.preRelease.toUpperCase()} - default=${spec.default}`;
      lines.push(`${COMPONENT}:${name}=true|false (${stage})`);
    }
    return lines.sort();
  }
}

/** `kube:Name` is `Name`; another component is an error (orch's API server registers only kube). */
function stripComponent(key: string): string {
  const colon = key.indexOf(':');
  if (colon < 0) return key;
  const component = key.slice(0, colon);
  if (component !== COMPONENT) throw new FeatureGateError(`component not registered: ${component}`);
  return key.slice(colon + 1);
}
