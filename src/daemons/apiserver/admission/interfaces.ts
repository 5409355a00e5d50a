/**
 * The admission stage's one interface, as upstream's admission.Interface with its
 * MutationInterface (admit) and ValidationInterface (validate): a plugin sees the attributes of a
 * write (or a CONNECT: exec, attach, port-forward, proxy), may change the object while mutating, and
 * rejects by throwing an ApiError (src/api/status.ts), which reaches the client as its Status.
 */
import type {JsonObject} from '../../../patch/types.js';
import type {ResourceInfo} from '../../../api/resources.js';
import type {UserInfo} from '../../shared/authentication/user.js';
import type {AuthorizationAttributes} from '../../shared/authorization/attributes.js';
import type {Clock} from '../../shared/clock.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  /** The resource as requested (its group, version, kind and plural). */
  resource: ResourceInfo;
  /** `status`, `scale`, `binding`, `exec`, ... or empty for the main resource. */
  subresource: string;
  namespace: string;
  name: string;
  /** The object being written (CREATE, UPDATE); plugins in the mutating phase may change it. */
  object?: JsonObject;
  oldObject?: JsonObject;
  /**
   * The request's options object: CreateOptions, UpdateOptions, PatchOptions, DeleteOptions, or the
   * connect options (PodExecOptions, PodAttachOptions, PodPortForwardOptions, PodProxyOptions).
   */
  operationOptions?: JsonObject;
  user: UserInfo;
  dryRun: boolean;
  /** Adds a `Warning` header to the response (upstream's warning.AddWarning). */
  addWarning?(text: string): void;
  /**
   * Adds an annotation to the request's audit event (upstream's AddAnnotation); keys are
   * `<plugin>.admission.<domain>/<name>` by upstream's convention (e.g. `pod-security.<domain>/enforce-policy`).
   * With `level`, only recorded when the request is audited at that level or above (AddAnnotationWithLevel).
   */
  addAnnotation?(key: string, value: string, level?: 'Metadata' | 'Request' | 'RequestResponse'): void;
  /**
   * The reinvocation of the mutating phase (upstream's ReinvocationContext), set by the chain: a
   * plugin whose change another reinvocable plugin may not have seen asks for one more run.
   */
  reinvocation?: AdmissionReinvocation;
  /** Asks the server's authorizer as the request's user (or another user), e.g. OwnerReferencesPermissionEnforcement. */
  authorize?(attributes: Omit<AuthorizationAttributes, 'user'> & {user?: UserInfo}): Promise<{allowed: boolean; reason?: string}>;
}

export interface AdmissionReinvocation {
  /** True during the second run of the mutating plugins. */
  readonly isReinvoke: boolean;
  /** Asks the chain to run the mutating plugins once more after this run. */
  requestReinvocation(): void;
  /** Plugins' own state kept from the first run into the second, by plugin name. */
  readonly values: Map<string, unknown>;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** The operations the plugin looks at (default: all). */
  handles?(operation: AdmissionOperation): boolean;
  /** Mutating phase: may change `attributes.object`; throws an ApiError to reject. */
  admit?(attributes: AdmissionAttributes): void | Promise<void>;
  /** Validating phase: may only reject (throw an ApiError). */
  validate?(attributes: AdmissionAttributes): void | Promise<void>;
  /** Stops what the plugin started (watches, timers, webhook clients) when the server stops. */
  close?(): void | Promise<void>;
}

/**
 * What admission plugins read and write, through the server's own registries (the preferred
 * version of a resource; JSON objects as served). Writes are made as the API server itself
 * (`system:apiserver`), through admission like any other write. Objects read may be shared with
 * other requests and frozen: a plugin copies what it wants to change.
 */
export interface AdmissionObjects {
  get(group: string, resource: string, namespace: string, name: string): Promise<JsonObject | undefined>;
  /** Every object of the resource in the namespace ('' for cluster-scoped resources or all namespaces). */
  list(group: string, resource: string, namespace?: string): Promise<JsonObject[]>;
  create(group: string, resource: string, namespace: string, object: JsonObject): Promise<JsonObject>;
  /** Replaces the object (its metadata.resourceVersion is the precondition); `subresource` e.g. `status`. */
  update(group: string, resource: string, namespace: string, object: JsonObject, subresource?: string): Promise<JsonObject>;
}

export interface AdmissionWatchHandlers {
  /** An object listed, created or updated (as stored). */
  apply(object: JsonObject): void;
  /** An object deleted (its last value). */
  remove(object: JsonObject): void;
}

export interface AdmissionWatch {
  /** True once the first list was applied. */
  readonly synced: boolean;
  stop(): void;
}

/** What a plugin's factory receives when the chain is built at start. */
export interface AdmissionPluginContext {
  /**
   * The plugin's configuration from `--admission-control-config-file` (the `configuration` object
   * inline, or the parsed content of its `path`), undefined when the file says nothing of the plugin.
   */
  configuration?: JsonObject;
  /** Where the configuration came from, for error messages (`<file>: plugin <name>`). */
  configurationSource?: string;
  objects: AdmissionObjects;
  /**
   * Keeps an in-memory view in step with a resource's stored objects (listed, then watched), for
   * plugins that read configuration objects on every request (admission policies and their
   * bindings). Absent, such plugins list on each request.
   */
  watch?(group: string, resource: string, handlers: AdmissionWatchHandlers): AdmissionWatch;
  clock: Clock;
  /** The server's options a plugin reads (its option table names, camelCased), e.g. `defaultNotReadyTolerationSeconds`. */
  serverOptions: Readonly<Record<string, unknown>>;
  /** The served resources of a kind in a group version (upstream's RESTMapper.RESTMappings), e.g. for owner references. */
  resourcesForKind(group: string, version: string, kind: string): ResourceInfo[];
  log(message: string, ...keysAndValues: unknown[]): void;
  /** Every resource the server serves now (built-ins and custom resources), for matchPolicy Equivalent; the built-ins without it. */
  resources?(): readonly ResourceInfo[];
}

/** Builds a plugin; a bad configuration throws an Error naming the plugin and the problem (the server does not start). */
export type AdmissionPluginFactory = (context: AdmissionPluginContext) => AdmissionPlugin | Promise<AdmissionPlugin>;

/** A resource and a kind with their group and version, as admission requests and policies name them. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
