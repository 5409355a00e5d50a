/**
 * Calling admission webhooks for one request (upstream's webhook/generic, mutating and validating
 * dispatchers):
 * - which webhooks apply: namespace selector, object selector, rules (on the requested resource,
 *   then, under matchPolicy Equivalent, on the other versions of the same stored resource, the
 *   object converted to that version), then matchConditions;
 * - mutating webhooks one after the other, each JSON patch applied to the object before the next
 *   call; a change after a reinvocable (IfNeeded) webhook had run asks the chain for one more run,
 *   in which only those webhooks are called again;
 * - validating webhooks all at once;
 * - failures: a webhook that cannot be called or answers nonsense is skipped under
 *   failurePolicy Ignore (with a `failed-open` audit annotation) and refuses the request under Fail
 *   (500 `failed calling webhook ...`); a denial always refuses with the webhook's status;
 * - warnings become Warning headers, audit annotations `<webhook name>/<key>`.
 */
import {randomUUID} from 'node:crypto';
import {names} from '../../../../../api/names.js';
import type {ResourceInfo} from '../../../../../api/resources.js';
import {matchesLabels, type LabelRequirement} from '../../../../../api/selectors.js';
import {ApiError, forbidden, internalError, notFound} from '../../../../../api/status.js';
import {jsonPatchApply} from '../../../../../patch/json.js';
import {isJsonObject, jsonEqual, type JsonObject, type JsonValue} from '../../../../../patch/types.js';
import {deepCopy, labelsOf} from '../../../rest/objects.js';
import type {AdmissionAttributes} from '../../interfaces.js';
import type {WebhookAccessor} from './accessors.js';
import type {WebhookCaller} from './client.js';
import {CallingWebhookError, dryRunUnsupported, rejection} from './errors.js';
import {admissionRequest, admissionReview, chooseReviewVersion, verifyAdmissionResponse, type GroupVersionKind, type GroupVersionResource} from './review.js';
import {ruleMatches, type RuleAttributes} from './rules.js';

export interface DispatcherDependencies {
  caller: WebhookCaller;
  /** A namespace's labels; undefined when it does not exist. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** Every resource served now (for the equivalent versions of a resource). */
  resources(): readonly ResourceInfo[];
  /** The object of `from`'s version in `to`'s version (same stored resource). */
  convert(object: JsonObject, from: ResourceInfo, to: ResourceInfo): JsonObject;
  log(message: string, ...keysAndValues: unknown[]): void;
  uid?(): string;
}

/** One webhook to call, with the resource and kind it is called for. */
export interface Invocation {
  hook: WebhookAccessor;
  /** The served resource the webhook matched (the requested one, or an equivalent version of it). */
  info: ResourceInfo;
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

const annotationDomain = () => `webhook.admission.${names().domain}`;

/** The kind a request on `info` (and its subresource) is made with. */
export function kindOf(info: ResourceInfo, subresource: string): GroupVersionKind {
  const sub = subresource ? info.subresources.find((s) => s.name === subresource) : undefined;
  if (sub) return {group: sub.group ?? info.group, version: sub.version ?? info.version, kind: sub.kind};
  return {group: info.group, version: info.version, kind: info.kind};
}

const gvr = (info: ResourceInfo): GroupVersionResource => ({group: info.group, version: info.version, resource: info.plural});

/** Versions of the same stored resource as `info` (upstream's equivalent resource mapper), `info` excluded. */
export function equivalentResources(info: ResourceInfo, all: readonly ResourceInfo[]): ResourceInfo[] {
  return all.filter((other) => other !== info && other.storagePrefix === info.storagePrefix && !!other.custom === !!info.custom && !(other.group === info.group && other.version === info.version && other.plural === info.plural));
}

/** Whether the subresource's object is the resource's own kind (status), which converts with it. */
const objectIsMainKind = (info: ResourceInfo, subresource: string) => kindOf(info, subresource).kind === info.kind;

/** Go marshals a JSON patch operation (a map) with its keys sorted. */
const sortedKeys = (op: JsonValue): JsonValue => (isJsonObject(op) ? Object.fromEntries(Object.keys(op).sort().map((k) => [k, op[k]!])) : op);

function replaceContents(target: JsonObject, source: JsonObject): void {
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, source);
}

function selectorMatches(requirements: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  return requirements.length === 0 || matchesLabels(requirements, labels ?? {});
}

export class WebhookDispatcher {
  constructor(private readonly deps: DispatcherDependencies) {}

  close(): void {
    this.deps.caller.close?.();
  }

  private namespaceName(a: AdmissionAttributes): string {
    return a.resource.group === '' && a.resource.plural === 'namespaces' ? a.name : a.namespace;
  }

  /** Upstream's namespace matcher: cluster-scoped requests (but namespaces) always match. */
  private async matchNamespace(hook: WebhookAccessor, a: AdmissionAttributes): Promise<{matches: boolean; error?: ApiError}> {
    const isNamespace = a.resource.group === '' && a.resource.plural === 'namespaces';
    if (!a.namespace && !isNamespace) return {matches: true};
    if (hook.namespaceSelector instanceof Error) return {matches: false, error: internalError(hook.namespaceSelector)};
    if (hook.namespaceSelector.length === 0) return {matches: true};
    let labels: Record<string, string> | undefined;
    // A namespace being created or updated is matched on its new labels (the store does not have them yet).
    if (isNamespace && !a.subresource && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object) labels = labelsOf(a.object);
    else {
      const name = this.namespaceName(a);
      labels = await this.deps.namespaceLabels(name);
      if (labels === undefined) return {matches: false, error: notFound({group: '', resource: 'namespaces'}, name)};
    }
    return {matches: selectorMatches(hook.namespaceSelector, labels)};
  }

  private matchObject(hook: WebhookAccessor, a: AdmissionAttributes): {matches: boolean; error?: ApiError} {
    if (hook.objectSelector instanceof Error) return {matches: false, error: internalError(hook.objectSelector)};
    if (hook.objectSelector.length === 0) return {matches: true};
    const selector = hook.objectSelector;
    const matches = [a.object, a.oldObject].some((o) => o !== undefined && matchesLabels(selector, labelsOf(o)));
    return {matches};
  }

  private ruleAttributes(a: AdmissionAttributes, info: ResourceInfo): RuleAttributes {
    return {operation: a.operation, group: info.group, version: info.version, resource: info.plural, subresource: a.subresource, namespace: a.namespace};
  }

  /** The object and old object as the invocation's version sees them. */
  private versioned(a: AdmissionAttributes, info: ResourceInfo): {object?: JsonObject; oldObject?: JsonObject} {
    if (info === a.resource || !objectIsMainKind(a.resource, a.subresource)) return {object: a.object, oldObject: a.oldObject};
    return {
      object: a.object && this.deps.convert(a.object, a.resource, info),
      oldObject: a.oldObject && this.deps.convert(a.oldObject, a.resource, info),
    };
  }

  private requestFor(a: AdmissionAttributes, inv: Invocation, uid: string, versioned: {object?: JsonObject; oldObject?: JsonObject}): JsonObject {
    return admissionRequest({
      uid,
      resource: inv.resource,
      kind: inv.kind,
      subresource: a.subresource,
      requestResource: gvr(a.resource),
      requestKind: kindOf(a.resource, a.subresource),
      requestSubresource: a.subresource,
      name: a.name,
      namespace: a.namespace,
      operation: a.operation,
      user: a.user,
      dryRun: a.dryRun,
      object: versioned.object,
      oldObject: versioned.oldObject,
      options: a.operationOptions,
    });
  }

  /** The invocation when the webhook applies to the request, undefined when not; throws the error that refuses it. */
  async shouldCall(hook: WebhookAccessor, a: AdmissionAttributes): Promise<Invocation | undefined> {
    const ns = await this.matchNamespace(hook, a);
    if (!ns.matches && !ns.error) return undefined;
    const obj = this.matchObject(hook, a);
    if (!obj.matches && !obj.error) return undefined;
    let info: ResourceInfo | undefined = hook.rules.some((r) => ruleMatches(r, this.ruleAttributes(a, a.resource))) ? a.resource : undefined;
    if (!info && hook.matchPolicy === 'Equivalent') {
      const equivalents = equivalentResources(a.resource, this.deps.resources());
      // Earlier rules first, as upstream.
      outer: for (const rule of hook.rules) {
        for (const equivalent of equivalents) {
          if (ruleMatches(rule, this.ruleAttributes(a, equivalent))) {
            info = equivalent;
            break outer;
          }
        }
      }
    }
    if (!info) return undefined;
    if (ns.error) throw ns.error;
    if (obj.error) throw obj.error;
    const invocation: Invocation = {hook, info, resource: gvr(info), kind: kindOf(info, a.subresource)};
    if (hook.matchConditions) {
      const versioned = this.versioned(a, info);
      const result = hook.matchConditions({object: versioned.object, oldObject: versioned.oldObject, request: this.requestFor(a, invocation, '', versioned)});
      if (result.error !== undefined) throw forbidden({group: a.resource.group, resource: a.resource.plural}, a.name, result.error);
      if (!result.matches) return undefined;
    }
    return invocation;
  }

  /** One call: the review sent, the answer checked, its annotations and warnings passed on; the response when allowed. */
  private async call(a: AdmissionAttributes, inv: Invocation, object: JsonObject | undefined, oldObject: JsonObject | undefined) {
    const {hook} = inv;
    if (a.dryRun) {
      if (hook.sideEffects === undefined) throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil');
      if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw dryRunUnsupported(hook.name);
    }
    const version = chooseReviewVersion(hook.admissionReviewVersions);
    if (!version) throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)');
    const uid = this.deps.uid?.() ?? randomUUID();
    const answer = await this.deps.caller.call(hook, admissionReview(version, this.requestFor(a, inv, uid, {object, oldObject})));
    let response;
    try {
      response = verifyAdmissionResponse(uid, hook.mutating, version, answer);
    } catch (error) {
      throw new CallingWebhookError(hook.name, `received invalid webhook response: ${(error as Error).message}`);
    }
    for (const [key, value] of Object.entries(response.auditAnnotations)) a.addAnnotation?.(`${hook.name}/${key}`, value);
    for (const warning of response.warnings) a.addWarning?.(warning);
    if (!response.allowed) throw rejection(hook.name, response.result);
    return response;
  }

  /** A mutating webhook's call and patch; true when the object changed. */
  private async callMutating(a: AdmissionAttributes, inv: Invocation, round: number, index: number): Promise<boolean> {
    const {hook} = inv;
    const versioned = this.versioned(a, inv.info);
    const response = await this.call(a, inv, versioned.object, versioned.oldObject);
    if (!response.patch || response.patch.length === 0) return false;
    let operations: JsonValue;
    try {
      operations = JSON.parse(response.patch.toString('utf8')) as JsonValue;
      if (!Array.isArray(operations)) throw new Error('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    } catch (error) {
      throw new CallingWebhookError(hook.name, `received undecodable patch in webhook response: ${(error as Error).message}`);
    }
    if (operations.length === 0) return false;
    if (!versioned.object || !a.object) throw internalError(new Error(`admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`));
    if (response.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type ${JSON.stringify(response.patchType)}`);
    let patched: JsonValue;
    try {
      patched = jsonPatchApply(deepCopy(versioned.object), operations);
    } catch (error) {
      // Not a call failure: the webhook answered, its patch does not apply (upstream: an internal error whatever the policy).
      throw internalError(error);
    }
    if (!isJsonObject(patched)) throw internalError(new Error(`admission webhook ${JSON.stringify(hook.name)} returned a patch that does not leave an object`));
    // The patch itself only in audit events of level Request and up (it may hold what Metadata must not show).
    a.addAnnotation?.(
      `patch.${annotationDomain()}/round_${round}_index_${index}`,
      JSON.stringify({configuration: hook.configurationName, webhook: hook.name, patch: operations.map(sortedKeys), patchType: 'JSONPatch'}),
      'Request',
    );
    if (jsonEqual(patched, versioned.object)) return false;
    const back = inv.info === a.resource || !objectIsMainKind(a.resource, a.subresource) ? patched : this.deps.convert(patched, inv.info, a.resource);
    replaceContents(a.object, back);
    return true;
  }

  /** The mutating webhooks, in order (upstream's mutatingDispatcher.Dispatch). */
  async mutate(a: AdmissionAttributes, hooks: readonly WebhookAccessor[]): Promise<void> {
    const state = reinvocationState(a);
    const isReinvoke = a.reinvocation?.isReinvoke ?? false;
    if (isReinvoke && !jsonEqual(state.lastOutput, a.object)) state.requireReinvokingPrevious();
    try {
      for (const [index, hook] of hooks.entries()) {
        const invocation = await this.shouldCall(hook, a);
        if (!invocation) continue;
        // A webhook skipped in the first run is not called for the first time in the second.
        if (isReinvoke && !state.reinvoke.has(hook.uid)) continue;
        const round = isReinvoke ? 1 : 0;
        let changed = false;
        let failure: unknown;
        try {
          changed = await this.callMutating(a, invocation, round, index);
        } catch (error) {
          failure = error;
        }
        a.addAnnotation?.(`mutation.${annotationDomain()}/round_${round}_index_${index}`, JSON.stringify({configuration: hook.configurationName, webhook: hook.name, mutated: changed}));
        if (changed) {
          state.requireReinvokingPrevious();
          a.reinvocation?.requestReinvocation();
        }
        if (hook.reinvocationPolicy === 'IfNeeded') state.previous.add(hook.uid);
        if (failure === undefined) continue;
        if (failure instanceof CallingWebhookError) {
          if (hook.failurePolicy === 'Ignore') {
            this.deps.log('Failed calling webhook, failing open', 'webhook', hook.name, 'err', failure.message);
            a.addAnnotation?.(`failed-open.mutation.${annotationDomain()}/round_${round}_index_${index}`, hook.name);
            continue;
          }
          this.deps.log('Failed calling webhook, failing closed', 'webhook', hook.name, 'err', failure.message);
          throw internalError(failure);
        }
        throw failure;
      }
    } finally {
      state.lastOutput = a.object === undefined ? undefined : deepCopy(a.object);
    }
  }

  /** The validating webhooks, all at once (upstream's validatingDispatcher.Dispatch); the first failure to arrive refuses. */
  async validate(a: AdmissionAttributes, hooks: readonly WebhookAccessor[]): Promise<void> {
    const invocations: Invocation[] = [];
    for (const hook of hooks) {
      const invocation = await this.shouldCall(hook, a);
      if (invocation) invocations.push(invocation);
    }
    if (invocations.length === 0) return;
    const errors: unknown[] = [];
    await Promise.all(
      invocations.map(async (inv, index) => {
        try {
          const versioned = this.versioned(a, inv.info);
          await this.call(a, inv, versioned.object, versioned.oldObject);
        } catch (error) {
          if (error instanceof CallingWebhookError) {
            if (inv.hook.failurePolicy === 'Ignore') {
              this.deps.log('Failed calling webhook, failing open', 'webhook', inv.hook.name, 'err', error.message);
              a.addAnnotation?.(`failed-open.validating.${annotationDomain()}/round_0_index_${index}`, inv.hook.name);
              return;
            }
            this.deps.log('Failed calling webhook, failing closed', 'webhook', inv.hook.name, 'err', error.message);
            errors.push(internalError(error));
            return;
          }
          errors.push(error);
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
  }
}

/** What the mutating dispatcher keeps from the first run into the second (upstream's webhookReinvokeContext). */
interface ReinvocationState {
  lastOutput?: JsonObject;
  /** IfNeeded webhooks called since the object last changed. */
  previous: Set<string>;
  /** Webhooks to call in the second run. */
  reinvoke: Set<string>;
  requireReinvokingPrevious(): void;
}

function reinvocationState(a: AdmissionAttributes): ReinvocationState {
  const key = 'MutatingAdmissionWebhook';
  const existing = a.reinvocation?.values.get(key) as ReinvocationState | undefined;
  if (existing) return existing;
  const state: ReinvocationState = {
    previous: new Set(),
    reinvoke: new Set(),
    requireReinvokingPrevious() {
      for (const uid of state.previous) state.reinvoke.add(uid);
      state.previous.clear();
    },
  };
  a.reinvocation?.values.set(key, state);
  return state;
}
