/**
 * The subset of the Kubernetes Pod API (core/v1) the process runtime reads and writes. Declared here
 * rather than shared because each daemon of this project types only the fields it uses.
 */

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: string;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    resourceFieldRef?: ResourceFieldSelector;
    configMapKeyRef?: KeySelector;
    secretKeyRef?: KeySelector;
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: {name?: string; optional?: boolean};
  secretRef?: {name?: string; optional?: boolean};
}

export interface HTTPHeader {
  name: string;
  value: string;
}

/**
 * Probe periods are seconds. The process runtime accepts fractional values (0.1) so that tests run
 * in milliseconds; the API server's validation is what keeps real pods to whole seconds.
 */
export interface Probe {
  exec?: {command?: string[]};
  httpGet?: {path?: string; port: number | string; host?: string; scheme?: 'HTTP' | 'HTTPS'; httpHeaders?: HTTPHeader[]};
  tcpSocket?: {port: number | string; host?: string};
  grpc?: {port: number; service?: string};
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: ContainerPort[];
  resources?: ResourceRequirements;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  /** Keep stdin open for `kubectl attach` (stdinOnce: close it after the first attach ends). */
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  volumeMounts?: VolumeMount[];
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

/** The volume sources the agent realizes (src/daemons/agent/volumes/); others are refused at mount. */
export interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  configMap?: {name?: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number};
  secret?: {secretName?: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number};
  downwardAPI?: {items?: DownwardAPIVolumeFile[]; defaultMode?: number};
  projected?: {sources?: VolumeProjection[]; defaultMode?: number};
  [other: string]: unknown;
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

export interface VolumeProjection {
  serviceAccountToken?: {audience?: string; expirationSeconds?: number; path: string};
  configMap?: {name?: string; items?: KeyToPath[]; optional?: boolean};
  secret?: {name?: string; items?: KeyToPath[]; optional?: boolean};
  downwardAPI?: {items?: DownwardAPIVolumeFile[]};
  [other: string]: unknown;
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  nodeName?: string;
  serviceAccountName?: string;
  hostname?: string;
  securityContext?: SecurityContext;
  volumes?: Volume[];
  automountServiceAccountToken?: boolean;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: {podIP?: string; hostIP?: string};
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started: boolean;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime: string | null;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

export interface PodStatus {
  phase: PodPhase;
  conditions: PodCondition[];
  message?: string;
  reason?: string;
  hostIP: string;
  hostIPs: {ip: string}[];
  podIP: string;
  podIPs: {ip: string}[];
  startTime: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses: ContainerStatus[];
  qosClass?: string;
}
