/**
 * One policy evaluated for one binding and param (upstream's validating validator and the
 * match-condition matcher): matchConditions first (false: the policy does not apply; an error:
 * the failure policy decides), then every validation into a decision with upstream's message
 * precedence (messageExpression, message, `failed expression: <expression>`), then the audit
 * annotations. Pure but for the authorizer calls expressions may make.
 */
import { AdmissionActivation, CostBudgetExceeded, type AdmissionInput, type EvaluationResult } from '../../../../../api/cel/admission.js';
import type { CompiledPolicy } from './compile.js';

export type Action = 'admit' | 'deny';

export interface PolicyDecision {
  action: Action;
  /** Whether the decision comes from an evaluation error (not a false validation). */
  error?: boolean;
  message: string;
  /** The Status reason of a denial (`Invalid` unless the validation names another). */
  reason?: string;
  /** The validation's index, for the audit annotation. */
  index: number;
}

export interface AuditAnnotationResult {
  key: string;
  value?: string;
  error?: string;
}

export interface ValidateResult {
  /** Match conditions did not hold: nothing to report. */
  skipped?: boolean;
  decisions: PolicyDecision[];
  auditAnnotations: AuditAnnotationResult[];
}

/** Upstream's limit on a messageExpression's result. */
const MAX_MESSAGE_BYTES = 5 * 1024;

const settle = async (r: EvaluationResult | Promise<EvaluationResult>) => r;

/**
 * Evaluates the match conditions: true when all hold; false when one is false; an error message
 * when an expression failed and none was false (upstream aggregates them).
 */
export async function matchConditionsHold(policy: CompiledPolicy, activation: AdmissionActivation): Promise<true | false | { error: string }> {
  const errors: string[] = [];
  for (const c of policy.matchConditions) {
    const result = await settle(activation.run(c.compiled));
    if (result.error !== undefined) errors.push(result.error);
    else if (result.value === false) return false;
  }
  if (errors.length === 0) return true;
  return { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
}

export function activationFor(policy: CompiledPolicy, input: AdmissionInput): AdmissionActivation {
  return new AdmissionActivation(input, policy.variables);
}

export async function validatePolicy(policy: CompiledPolicy, input: AdmissionInput): Promise<ValidateResult> {
  const onError: Action = policy.failurePolicy === 'Ignore' ? 'admit' : 'deny';
  const activation = activationFor(policy, input);
  const failed = (message: string): ValidateResult => ({ decisions: [{ action: onError, error: true, message, index: 0 }], auditAnnotations: [] });
  try {
    const matched = await matchConditionsHold(policy, activation);
    if (matched === false) return { skipped: true, decisions: [], auditAnnotations: [] };
    if (matched !== true) return failed(matched.error);

    const decisions: PolicyDecision[] = [];
    for (const [index, v] of policy.validations.entries()) {
      const result = await settle(activation.run(v.expression));
      if (result.error !== undefined) {
        decisions.push({ action: onError, error: true, message: result.error, index });
        continue;
      }
      if (result.value === true) {
        decisions.push({ action: 'admit', message: '', index });
        continue;
      }
      let message = '';
      if (v.messageExpression) {
        const m = await settle(activation.run(v.messageExpression));
        if (m.error === undefined && typeof m.value === 'string') {
          message = m.value.trim();
          if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES || message.includes('\n')) message = '';
        }
      }
      if (!message && v.message) message = v.message.trim();
      if (!message) message = `failed expression: ${v.expression.source.trim()}`;
      decisions.push({ action: 'deny', message, reason: v.reason ?? 'Invalid', index });
    }

    // Audit annotations run on their own budget (upstream passes the full budget again).
    const annotationActivation = activationFor(policy, input);
    const auditAnnotations: AuditAnnotationResult[] = [];
    for (const a of policy.auditAnnotations) {
      const result = await settle(annotationActivation.run(a.valueExpression));
      if (result.error !== undefined) {
        if (onError === 'deny') auditAnnotations.push({ key: a.key, error: result.error });
      } else if (typeof result.value === 'string') {
        const value = result.value.trim();
        if (value) auditAnnotations.push({ key: a.key, value });
      } else if (result.value !== null) {
        auditAnnotations.push({
          key: a.key,
          error: `valueExpression '${a.valueExpression.source}' resulted in unsupported return type: ${typeName(result.value)}. Return type must be either string or null.`,
        });
      }
    }
    return { decisions, auditAnnotations };
  } catch (error) {
    if (error instanceof CostBudgetExceeded) return failed(error.message);
    throw error;
  }
}

function typeName(v: unknown): string {
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  return typeof v === 'object' ? 'map' : typeof v;
}
