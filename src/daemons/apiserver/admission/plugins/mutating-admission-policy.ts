/**
 * MutatingAdmissionPolicy (upstream's admission/plugin/policy/mutating): the policies bound by
 * MutatingAdmissionPolicyBindings change matching objects with CEL mutations, in order:
 * ApplyConfiguration (the expression's object merged over the request's object as server-side
 * apply merges, with the kind's list and map semantics, src/api/apply) and JSONPatch (the
 * expression's list of operations applied as a JSON patch). With `reinvocationPolicy: IfNeeded`
 * a policy runs once more when a later policy changed the object. Errors and configuration
 * problems follow the policy's failurePolicy: the request is refused after every policy ran
 * (403, reason Invalid, `policy 'p' with binding 'b' denied request: ...`), as upstream.
 */
import { celToJson } from '../../../../api/cel/admission.js';
import { merge } from '../../../../api/apply/typed.js';
import { typeAt } from '../../../../api/apply/schema.js';
import { builtinTypes, openApiTypes } from '../../../../api/apply/types.js';
import { names } from '../../../../api/names.js';
import { jsonPatchApply } from '../../../../patch/json.js';
import { isJsonObject, jsonEqual, type JsonObject } from '../../../../patch/types.js';
import type { AdmissionAttributes, AdmissionPlugin, AdmissionPluginContext } from '../interfaces.js';
import { compilePolicy, type CompiledPolicy } from './policy/compile.js';
import { celAuthorizer, dispatch, matchEnvironment, versionedObject, nameOf, notReady, type Invocation } from './policy/dispatch.js';
import { ApiError, failureStatus } from '../../../../api/status.js';
import { admissionForbidden } from '../errors.js';
import { activationFor, matchConditionsHold } from './policy/evaluate.js';
import type { MatchEnvironment } from './policy/matching.js';
import { PolicySource } from './policy/source.js';
import { CostBudgetExceeded } from '../../../../api/cel/admission.js';

/** Applies one policy invocation's mutations to `object`; returns the new object or throws the failure's text. */
export async function mutate(inv: Invocation, attributes: AdmissionAttributes, requestObject: JsonObject): Promise<JsonObject | undefined> {
  const versions = versionedObject(attributes, inv.match);
  const object = versions.to(requestObject);
  const activation = activationFor(inv.compiled, {
    object, oldObject: attributes.oldObject ? versions.to(attributes.oldObject) : null, request: inv.request, params: inv.param, namespaceObject: inv.namespaceObject,
    authorizer: celAuthorizer(attributes, inv.match.resource),
  });
  const matched = await matchConditionsHold(inv.compiled, activation);
  if (matched === false) return undefined;
  if (matched !== true) throw new Error(matched.error);
  let current = object;
  for (const m of inv.compiled.mutations) {
    const result = await activation.run(m.expression);
    if (result.error !== undefined) throw new Error(result.error);
    const value = celToJson(result.value);
    if (m.patchType === 'JSONPatch') {
      if (!Array.isArray(value)) throw new Error(`JSONPatch expression must return an array of JSONPatch values`);
      const patched = jsonPatchApply(current, value);
      if (!isJsonObject(patched)) throw new Error('JSON Patch did not produce an object');
      current = patched;
    } else {
      if (!isJsonObject(value)) throw new Error('ApplyConfiguration expression must return an Object');
      const apiVersion = typeof current.apiVersion === 'string' ? current.apiVersion : attributes.resource.version;
      const kind = typeof current.kind === 'string' ? current.kind : attributes.resource.kind;
      const schema = attributes.resource.openAPIV3Schema;
      const types = attributes.resource.custom ? openApiTypes(schema as JsonObject | undefined) : builtinTypes;
      current = merge(current, value, typeAt(types, apiVersion, kind, []));
    }
  }
  return versions.back(current);
}

/**
 * Upstream's policy dispatcher error: a Forbidden (403) whose message is the first failure's text
 * alone, with the reason Invalid and every failure as a cause.
 */
function mutationDenial(attributes: AdmissionAttributes, failures: string[]): ApiError {
  const error = admissionForbidden(attributes, 'admission request denied by policy');
  return new ApiError(failureStatus(error.code, 'Invalid', failures[0]!, { ...error.status.details, causes: failures.map((message) => ({ message })) }));
}

export class MutatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'MutatingAdmissionPolicy';
  private readonly source: PolicySource<CompiledPolicy>;
  private readonly env: MatchEnvironment;

  constructor(private readonly context: Pick<AdmissionPluginContext, 'objects' | 'watch'>) {
    this.source = new PolicySource(
      { group: names().groups.admissionregistration, policies: 'mutatingadmissionpolicies', bindings: 'mutatingadmissionpolicybindings' },
      (policy) => compilePolicy(policy, true),
      context.objects,
      context.watch,
    );
    this.env = matchEnvironment(context.objects);
  }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.operation === 'DELETE' || attributes.operation === 'CONNECT' || !attributes.object) return;
    if (!(await this.source.ready())) throw notReady(attributes);
    const hooks = await this.source.hooks();
    if (hooks.length === 0) return;
    const { invocations, errors } = await dispatch(hooks, attributes, this.context.objects, this.env);
    // Upstream's PolicyError texts, gathered over every invocation and reported after them.
    const failures: string[] = [];
    for (const e of errors) {
      if (e.compiled.failurePolicy === 'Ignore') continue;
      failures.push(e.binding
        ? `policy '${nameOf(e.policy)}' with binding '${nameOf(e.binding)}' denied request: ${e.message}`
        : `policy ${JSON.stringify(nameOf(e.policy))} denied request: ${e.message}`);
    }
    // Each invocation in order; those asking IfNeeded run again when a later one changed the object.
    const changedAfter = new Map<Invocation, boolean>();
    const run = async (inv: Invocation): Promise<boolean> => {
      const before = attributes.object!;
      const snapshot = structuredClone(before);
      let after: JsonObject | undefined;
      try {
        after = await mutate(inv, attributes, snapshot);
      } catch (error) {
        if (inv.compiled.failurePolicy !== 'Ignore') {
          const text = error instanceof CostBudgetExceeded ? error.message : (error as Error).message;
          failures.push(`policy '${nameOf(inv.policy)}' with binding '${nameOf(inv.binding)}' denied request: ${text}`);
        }
        return false;
      }
      if (!after || jsonEqual(after, before)) return false;
      // In place: the registry holds this very object.
      for (const key of Object.keys(before)) delete before[key];
      Object.assign(before, after);
      return true;
    };
    for (const [i, inv] of invocations.entries()) {
      if (await run(inv)) for (const earlier of invocations.slice(0, i)) changedAfter.set(earlier, true);
    }
    for (const inv of invocations) {
      if (inv.compiled.reinvocationPolicy === 'IfNeeded' && changedAfter.get(inv)) await run(inv);
    }
    if (failures.length) throw mutationDenial(attributes, failures);
  }

  close(): void {
    this.source.stop();
  }
}
