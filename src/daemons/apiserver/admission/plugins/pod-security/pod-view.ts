/**
 * The parts of a pod (or a pod template) the PodSecurity checks read, as JSON is served: every field
 * optional, names as in the API. The checks still guard lists and objects, since admission sees the
 * object before every field of a nested template is validated.
 */

export interface PodMetadata {
  annotations?: Record<string, string>;
}

export interface SELinuxOptionsView {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

interface ProfileView {
  type?: string;
  localhostProfile?: string;
}

interface WindowsOptionsView {
  hostProcess?: boolean;
}

/** The fields a pod's and a container's security contexts share (the container's win upstream). */
interface CommonSecurityContextView {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  seLinuxOptions?: SELinuxOptionsView;
  seccompProfile?: ProfileView;
  appArmorProfile?: ProfileView;
  windowsOptions?: WindowsOptionsView;
}

export interface SecurityContextView extends CommonSecurityContextView {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: {add?: string[]; drop?: string[]};
  procMount?: string;
}

export interface PodSecurityContextView extends CommonSecurityContextView {
  sysctls?: Array<{name?: string; value?: string}>;
}

/** A probe or a lifecycle handler: the two kinds that name a host. */
export interface HandlerView {
  httpGet?: {host?: string};
  tcpSocket?: {host?: string};
}

export interface ContainerView {
  name?: string;
  image?: string;
  ports?: Array<{hostPort?: number}>;
  securityContext?: SecurityContextView;
  livenessProbe?: HandlerView;
  readinessProbe?: HandlerView;
  startupProbe?: HandlerView;
  lifecycle?: {postStart?: HandlerView; preStop?: HandlerView};
}

/** A volume: its name and one source (`hostPath`, `nfs`, `configMap`, ...). */
export interface VolumeView {
  name?: string;
  hostPath?: {path?: string};
  [source: string]: unknown;
}

export interface PodSpecView {
  containers?: ContainerView[];
  initContainers?: ContainerView[];
  ephemeralContainers?: ContainerView[];
  volumes?: VolumeView[];
  securityContext?: PodSecurityContextView;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  hostUsers?: boolean;
  os?: {name?: string};
  runtimeClassName?: string;
}
