/**
 * What the agent's servers serve, as the rest of the agent hands it over: the configuration of the
 * three listeners and the providers the handlers read at request time.
 */
import type {TlsVersionName} from '../../../options/value-tls.js';
import type {Summary} from './summary.js';
import type {StreamingProviders} from '../streaming/server.js';

/** The serving part of the agent's configuration (see serverConfigFromOptions for the option names). */
export interface AgentServerConfig {
  /** --address: bind address of the main and the read-only server. */
  address: string;
  /** --port: the HTTPS server (0 picks a free port: tests). */
  port: number;
  /** --read-only-port: plain HTTP without authentication; 0 turns it off. */
  readOnlyPort: number;
  /** --healthz-bind-address. */
  healthzBindAddress: string;
  /** --healthz-port: plain HTTP `/healthz`; 0 turns it off. */
  healthzPort: number;
  /** --enable-server: false starts neither the main nor the read-only server. */
  enableServer: boolean;
  /** --enable-debugging-handlers: /containerLogs and /runningpods on the main server. */
  enableDebuggingHandlers: boolean;
  /** --tls-cert-file and --tls-private-key-file; without both, a pair is generated in certDir. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** --cert-dir. */
  certDir: string;
  /** --tls-min-version. */
  tlsMinVersion?: TlsVersionName;
  /** --tls-cipher-suites (Go names). */
  tlsCipherSuites?: string[];
  /** --anonymous-auth. */
  anonymousAuth: boolean;
  /** --client-ca-file. */
  clientCaFile?: string;
  /** --authentication-token-webhook: bearer tokens are checked with a TokenReview through the API server. */
  authenticationTokenWebhook?: boolean;
  /** --authentication-token-webhook-cache-ttl. */
  authenticationTokenWebhookCacheTtlMs?: number;
  /** --authorization-mode: AlwaysAllow, or Webhook (a SubjectAccessReview through the API server). */
  authorizationMode: string;
  /** --authorization-webhook-cache-authorized-ttl and -unauthorized-ttl. */
  authorizationWebhookAuthorizedTtlMs?: number;
  authorizationWebhookUnauthorizedTtlMs?: number;
  /** --streaming-connection-idle-timeout: exec, attach and port-forward connections without traffic close after it; 0 never. */
  streamingConnectionIdleTimeoutMs?: number;
  /** Names of the generated serving certificate (default: the machine's host name). */
  hostname?: string;
}

/** The pod fields the handlers read; everything else of the pod is served as given. */
export interface ServedContainerStatus {
  name: string;
  state?: {waiting?: {reason?: string}; running?: unknown; terminated?: unknown};
}

export interface ServedPod {
  apiVersion?: string;
  kind?: string;
  metadata: {name?: string; namespace?: string; uid?: string};
  spec?: {containers?: {name: string}[]; initContainers?: {name: string}[]; ephemeralContainers?: {name: string}[]};
  status?: {
    phase?: string;
    hostIP?: string;
    podIP?: string;
    containerStatuses?: ServedContainerStatus[];
    initContainerStatuses?: ServedContainerStatus[];
  };
}

/** Upstream's container states of the running-containers metric. */
export type RunningContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** A pod as the runtime sees it (upstream's kubecontainer.Pod): what it actually runs. */
export interface RunningPod {
  uid: string;
  name: string;
  namespace: string;
  containers: {name: string; image?: string; state?: RunningContainerState}[];
}

type MaybePromise<T> = T | Promise<T>;

export interface AgentServerProviders {
  /** The pods this agent runs (bound to the node and static), as `GET /pods` lists them. */
  pods(): MaybePromise<readonly ServedPod[]>;
  /** What the runtime runs, as `GET /runningpods/` lists it. */
  runningPods(): MaybePromise<readonly RunningPod[]>;
  /**
   * The log file of a container's current (or, with `previous`, its previous) instance; undefined
   * when there is none (not started yet, or no earlier instance).
   */
  logPath(namespace: string, pod: string, container: string, previous: boolean): MaybePromise<string | undefined>;
  /** The `/stats/summary` document. */
  stats(): MaybePromise<Summary>;
  /** exec, attach, port-forward and run (absent: those paths answer 404 "pod does not exist"). */
  streaming?: StreamingProviders;
  /** The `syncloop` health check: throws (or rejects) with the reason when the agent is unhealthy. */
  health(): MaybePromise<void>;
}
