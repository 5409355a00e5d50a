/**
 * ValidatingAdmissionPolicy (upstream's admission/plugin/policy/validating): the policies bound by
 * ValidatingAdmissionPolicyBindings validate matching requests with CEL. A failed validation is
 * acted on by the binding's validationActions: Deny refuses the request
 * (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`, the validation's
 * reason and code), Warn adds a Warning header, Audit adds the
 * `validation.policy.admission.<domain>/validation_failure` audit annotation. Evaluation errors
 * and configuration problems follow the policy's failurePolicy. The policies' status (type
 * checking) is the controller manager's (validatingadmissionpolicy-status-controller).
 */
import { names } from '../../../../api/names.js';
import { isJsonObject, type JsonObject } from '../../../../patch/types.js';
import type { AdmissionAttributes, AdmissionPlugin, AdmissionPluginContext } from '../interfaces.js';
import { compilePolicy, type CompiledPolicy } from './policy/compile.js';
import { celAuthorizer, dispatch, matchEnvironment, nameOf, notReady, policyDenial, versionedObject } from './policy/dispatch.js';
import { validatePolicy, type PolicyDecision } from './policy/evaluate.js';
import type { MatchEnvironment } from './policy/matching.js';
import { PolicySource } from './policy/source.js';

/** Upstream's limit on an audit annotation value. */
const MAX_AUDIT_ANNOTATION_VALUE = 10 * 1024;

interface Denial {
  policy: string;
  binding?: string;
  message: string;
  reason?: string;
}

export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly source: PolicySource<CompiledPolicy>;
  private readonly env: MatchEnvironment;

  constructor(private readonly context: Pick<AdmissionPluginContext, 'objects' | 'watch'>) {
    const group = names().groups.admissionregistration;
    this.source = new PolicySource(
      { group, policies: 'validatingadmissionpolicies', bindings: 'validatingadmissionpolicybindings' },
      (policy) => compilePolicy(policy, false),
      context.objects,
      context.watch,
    );
    this.env = matchEnvironment(context.objects);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (!(await this.source.ready())) throw notReady(attributes);
    const hooks = await this.source.hooks();
    if (hooks.length === 0) return;
    const { invocations, errors } = await dispatch(hooks, attributes, this.context.objects, this.env);
    const denials: Denial[] = [];
    for (const e of errors) {
      if (e.compiled.failurePolicy === 'Ignore') continue;
      denials.push({ policy: nameOf(e.policy), binding: e.binding ? nameOf(e.binding) : undefined, message: e.message });
    }
    // Audit annotations of a policy are gathered over its bindings, distinct values joined.
    const annotations = new Map<string, Map<string, string[]>>();
    for (const inv of invocations) {
      const policyName = nameOf(inv.policy);
      const bindingName = nameOf(inv.binding);
      const actions = (isJsonObject(inv.binding.spec) && Array.isArray(inv.binding.spec.validationActions) ? inv.binding.spec.validationActions : [])
        .filter((a): a is string => typeof a === 'string');
      const authorizer = celAuthorizer(attributes, inv.match.resource);
      const versions = versionedObject(attributes, inv.match);
      const result = await validatePolicy(inv.compiled, {
        object: attributes.object ? versions.to(attributes.object) : null,
        oldObject: attributes.oldObject ? versions.to(attributes.oldObject) : null,
        request: inv.request,
        params: inv.param,
        namespaceObject: inv.namespaceObject,
        authorizer,
      });
      for (const d of result.decisions) {
        if (d.action !== 'deny') continue;
        for (const action of actions) this.act(action, d, policyName, bindingName, inv.binding, attributes, denials);
      }
      for (const a of result.auditAnnotations) {
        if (a.error !== undefined) {
          denials.push({ policy: policyName, binding: bindingName, message: a.error });
          continue;
        }
        const perPolicy = annotations.get(policyName) ?? new Map<string, string[]>();
        annotations.set(policyName, perPolicy);
        const values = perPolicy.get(a.key) ?? [];
        const value = a.value!.slice(0, MAX_AUDIT_ANNOTATION_VALUE);
        if (!values.includes(value)) values.push(value);
        perPolicy.set(a.key, values);
      }
    }
    for (const [policyName, perPolicy] of annotations) {
      for (const [key, values] of perPolicy) attributes.addAnnotation?.(`${policyName}/${key}`, values.join(', '));
    }
    if (denials.length) {
      const first = denials[0]!;
      const message = first.binding !== undefined
        ? `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.message}`
        : `ValidatingAdmissionPolicy '${first.policy}' denied request: ${first.message}`;
      throw policyDenial(attributes, message, first.reason || 'Invalid');
    }
  }

  private act(action: string, d: PolicyDecision, policy: string, binding: string, bindingObject: JsonObject, attributes: AdmissionAttributes, denials: Denial[]): void {
    switch (action) {
      case 'Deny':
        denials.push({ policy, binding, message: d.message, reason: d.error ? undefined : d.reason });
        break;
      case 'Warn':
        attributes.addWarning?.(`Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${binding}': ${d.message}`);
        break;
      case 'Audit': {
        const spec = isJsonObject(bindingObject.spec) ? bindingObject.spec : {};
        attributes.addAnnotation?.(`validation.policy.admission.${names().domain}/validation_failure`, JSON.stringify([{
          message: d.message,
          policy: typeof spec.policyName === 'string' ? spec.policyName : '',
          binding,
          expressionIndex: d.index,
          validationActions: spec.validationActions ?? [],
        }]));
        break;
      }
    }
  }

  close(): void {
    this.source.stop();
  }
}
