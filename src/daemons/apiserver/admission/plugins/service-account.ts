/**
 * ServiceAccount: a new pod runs as a service account (`default` when it names none), which must
 * exist; unless the pod or the account turns automounting off, every container mounts the projected
 * token volume `<product>-api-access-<random>` (a bound token, the cluster CA and the namespace) at
 * the service account path; the account's imagePullSecrets become the pod's when it has none; an
 * account annotated `<labelDomain>/enforce-mountable-secrets: "true"` limits the secrets the pod may
 * use to the ones it lists. Mirror pods may not reference accounts or secrets (upstream's
 * plugin/pkg/admission/serviceaccount).
 */
import {names} from '../../../../api/names.js';
import {notFound, plainServerError} from '../../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {generatedName, stringAt} from '../../rest/objects.js';
import type {Clock} from '../../../shared/clock.js';
import {sleep} from '../../../shared/clock.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {admissionForbidden} from '../errors.js';
import {containersOf, isCoreResource, objectsAt, podSecretNames, specOf} from './pod-helpers.js';

export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** The bound token's lifetime a pod's volume asks for (upstream's WarnOnlyBoundTokenExpirationSeconds). */
export const TOKEN_EXPIRATION_SECONDS = 3607;
/** A projected volume's default file mode, 0644. */
const DEFAULT_MODE = 0o644;

/** Upstream's TokenVolumeSource: a bound token, the root CA config map's ca.crt, the namespace. */
export function tokenVolume(name: string): JsonObject {
  return {
    name,
    projected: {
      defaultMode: DEFAULT_MODE,
      sources: [
        {serviceAccountToken: {path: 'token', expirationSeconds: TOKEN_EXPIRATION_SECONDS}},
        {configMap: {name: names().rootCaConfigMap, items: [{key: 'ca.crt', path: 'ca.crt'}]}},
        {downwardAPI: {items: [{path: 'namespace', fieldRef: {apiVersion: 'v1', fieldPath: 'metadata.namespace'}}]}},
      ],
    },
  };
}

/** The pod's preference wins, then the account's; true by default. */
export function shouldAutomount(account: JsonObject, pod: JsonObject): boolean {
  const fromPod = specOf(pod).automountServiceAccountToken;
  if (typeof fromPod === 'boolean') return fromPod;
  if (typeof account.automountServiceAccountToken === 'boolean') return account.automountServiceAccountToken;
  return true;
}

/** Adds the token volume (unless one is there) and its mount to every container without a mount at the path. */
export function mountToken(pod: JsonObject, generateName: (prefix: string) => string): void {
  const spec = specOf(pod);
  const prefix = `${names().podAdmission.apiAccessVolumePrefix}-`;
  const mountPath = names().serviceAccountMountPath;
  const volumes = objectsAt(spec.volumes);
  const existing = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(prefix));
  const volumeName = existing ? String(existing.name) : generateName(prefix);
  let needsVolume = false;
  for (const {container} of containersOf(spec, ['initContainers', 'containers'])) {
    const mounts = objectsAt(container.volumeMounts);
    if (mounts.some((m) => m.mountPath === mountPath)) continue;
    container.volumeMounts = [...mounts, {name: volumeName, readOnly: true, mountPath}];
    needsVolume = true;
  }
  if (!existing && needsVolume) spec.volumes = [...volumes, tokenVolume(volumeName)];
}

/** The account's imagePullSecrets become the pod's when it has none. */
export function inheritPullSecrets(account: JsonObject, pod: JsonObject): void {
  const spec = specOf(pod);
  if (objectsAt(spec.imagePullSecrets).length > 0) return;
  spec.imagePullSecrets = objectsAt(account.imagePullSecrets).map((s) => ({name: String(s.name ?? '')}));
}

export const enforcesMountableSecrets = (account: JsonObject): boolean =>
  /^(1|t|T|true|TRUE|True)$/.test(stringAt(account, 'metadata', 'annotations', names().podAdmission.enforceMountableSecrets) ?? '');

/** Upstream's limitSecretReferences: the first secret the pod uses that its account does not list. */
export function secretReferenceProblem(account: JsonObject, pod: JsonObject): string | undefined {
  const accountName = stringAt(account, 'metadata', 'name') ?? '';
  const mountable = new Set(objectsAt(account.secrets).map((s) => String(s.name ?? '')));
  const spec = specOf(pod);
  for (const volume of objectsAt(spec.volumes)) {
    const secret = stringAt(volume, 'secret', 'secretName');
    if (isJsonObject(volume.secret) && !mountable.has(secret ?? '')) {
      return `volume with secret.secretName="${secret ?? ''}" is not allowed because service account ${accountName} does not reference that secret`;
    }
  }
  for (const {container, list} of containersOf(spec, ['initContainers', 'containers'])) {
    const kind = list === 'initContainers' ? 'init container' : 'container';
    for (const env of objectsAt(container.env)) {
      const secret = stringAt(env, 'valueFrom', 'secretKeyRef', 'name');
      if (secret !== undefined && !mountable.has(secret)) {
        return `${kind} ${String(container.name ?? '')} with envVar ${String(env.name ?? '')} referencing secret.secretName="${secret}" is not allowed because service account ${accountName} does not reference that secret`;
      }
    }
    for (const from of objectsAt(container.envFrom)) {
      const secret = stringAt(from, 'secretRef', 'name');
      if (secret !== undefined && !mountable.has(secret)) {
        return `${kind} ${String(container.name ?? '')} with envFrom referencing secret.secretName="${secret}" is not allowed because service account ${accountName} does not reference that secret`;
      }
    }
  }
  const pullable = new Set(objectsAt(account.imagePullSecrets).map((s) => String(s.name ?? '')));
  const pulls = objectsAt(spec.imagePullSecrets);
  for (let i = 0; i < pulls.length; i++) {
    const name = String(pulls[i]!.name ?? '');
    if (!pullable.has(name)) return `imagePullSecrets[${i}].name="${name}" is not allowed because service account ${accountName} does not reference that imagePullSecret`;
  }
  return undefined;
}

/** Ephemeral containers added later obey the same rule for their environment. */
export function ephemeralSecretProblem(account: JsonObject, pod: JsonObject): string | undefined {
  const accountName = stringAt(account, 'metadata', 'name') ?? '';
  const mountable = new Set(objectsAt(account.secrets).map((s) => String(s.name ?? '')));
  for (const {container} of containersOf(specOf(pod), ['ephemeralContainers'])) {
    for (const env of objectsAt(container.env)) {
      const secret = stringAt(env, 'valueFrom', 'secretKeyRef', 'name');
      if (secret !== undefined && !mountable.has(secret)) {
        return `ephemeral container ${String(container.name ?? '')} with envVar ${String(env.name ?? '')} referencing secret.secretName="${secret}" is not allowed because service account ${accountName} does not reference that secret`;
      }
    }
  }
  return undefined;
}

/** What a mirror pod (an agent's static pod) may not reference, or undefined. */
export function mirrorPodProblem(pod: JsonObject): string | undefined {
  const spec = specOf(pod);
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') return 'a mirror pod may not reference service accounts';
  if (podSecretNames(spec).length > 0) return 'a mirror pod may not reference secrets';
  for (const volume of objectsAt(spec.volumes)) {
    if (objectsAt(isJsonObject(volume.projected) ? volume.projected.sources : undefined).some((s) => s.serviceAccountToken !== undefined)) {
      return 'a mirror pod may not use ServiceAccountToken volume projections';
    }
  }
  return undefined;
}

export interface ServiceAccountDeps {
  getServiceAccount(namespace: string, name: string): Promise<JsonObject | undefined>;
  clock: Clock;
  /** Names the token volume (tests pass a fixed one). */
  generateName?: (prefix: string) => string;
}

export class ServiceAccount implements AdmissionPlugin {
  readonly name = 'ServiceAccount';
  private readonly generateName: (prefix: string) => string;

  constructor(private readonly deps: ServiceAccountDeps) {
    this.generateName = deps.generateName ?? generatedName;
  }

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  /** Pods and their ephemeralcontainers subresource. */
  private podOf(attributes: AdmissionAttributes): JsonObject | undefined {
    if (!isCoreResource(attributes, 'pods')) return undefined;
    if (attributes.subresource !== '' && attributes.subresource !== 'ephemeralcontainers') return undefined;
    return isJsonObject(attributes.object) ? attributes.object : undefined;
  }

  /**
   * The account, or the Forbidden upstream answers. The default account is asked for up to ten
   * times, 100-200 ms apart: the service account controller creates it just after its namespace.
   */
  private async account(attributes: AdmissionAttributes, name: string): Promise<JsonObject> {
    const attempts = name === DEFAULT_SERVICE_ACCOUNT ? 10 : 1;
    const interval = 100 + Math.floor(Math.random() * 100);
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(this.deps.clock, interval);
      const found = await this.deps.getServiceAccount(attributes.namespace, name);
      if (found) return found;
    }
    const cause = notFound({group: '', resource: 'serviceaccount'}, name).message;
    throw admissionForbidden(attributes, `error looking up service account ${attributes.namespace}/${name}: ${cause}`);
  }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const pod = this.podOf(attributes);
    if (!pod || attributes.operation !== 'CREATE' || attributes.subresource !== '') return;
    if (stringAt(pod, 'metadata', 'annotations', names().annotations.mirrorPod) === undefined) {
      const spec = specOf(pod);
      if (typeof spec.serviceAccountName !== 'string' || spec.serviceAccountName === '') spec.serviceAccountName = DEFAULT_SERVICE_ACCOUNT;
      const account = await this.account(attributes, spec.serviceAccountName as string);
      if (shouldAutomount(account, pod)) mountToken(pod, this.generateName);
      inheritPullSecrets(account, pod);
    }
    await this.validate(attributes);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const pod = this.podOf(attributes);
    if (!pod) return;
    const spec = specOf(pod);
    const accountName = typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '';
    const podName = stringAt(pod, 'metadata', 'name') ?? '';
    if (attributes.operation === 'UPDATE' && attributes.subresource === 'ephemeralcontainers') {
      if (accountName === '') throw admissionForbidden(attributes, `no service account specified for pod ${attributes.namespace}/${podName}`);
      const account = await this.account(attributes, accountName);
      const problem = enforcesMountableSecrets(account) ? ephemeralSecretProblem(account, pod) : undefined;
      // Upstream returns this one as a plain error: a 500 without a reason.
      if (problem) throw plainServerError(problem);
      return;
    }
    if (attributes.operation !== 'CREATE' || attributes.subresource !== '') return;
    if (stringAt(pod, 'metadata', 'annotations', names().annotations.mirrorPod) !== undefined) {
      const problem = mirrorPodProblem(pod);
      if (problem) throw admissionForbidden(attributes, problem);
      return;
    }
    if (accountName === '') throw admissionForbidden(attributes, `no service account specified for pod ${attributes.namespace}/${podName}`);
    const account = await this.account(attributes, accountName);
    const problem = enforcesMountableSecrets(account) ? secretReferenceProblem(account, pod) : undefined;
    if (problem) throw admissionForbidden(attributes, problem);
  }
}

export const createServiceAccount = (context: AdmissionPluginContext): ServiceAccount =>
  new ServiceAccount({getServiceAccount: (namespace, name) => context.objects.get('', 'serviceaccounts', namespace, name), clock: context.clock});
