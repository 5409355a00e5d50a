/**
 * A webhook's matchConditions (upstream's admission/plugin/webhook/matchconditions): CEL
 * expressions over `object`, `oldObject` and `request` (the AdmissionRequest, v1 form), all of
 * which must be true for the webhook to be called. A false condition skips the webhook whatever
 * else happened; errors (including an expression that does not compile) follow the webhook's
 * failurePolicy: Fail rejects the request, Ignore skips the webhook.
 */
import type {ParseResult} from '@marcbachmann/cel-js';
import {kubernetesEnvironment} from '../../../../../api/cel/library.js';
import {dynValue} from '../../../../../api/cel/rules.js';
import type {JsonObject, JsonValue} from '../../../../../patch/types.js';
import type {FailurePolicy} from './accessors.js';

export interface MatchInput {
  object?: JsonObject;
  oldObject?: JsonObject;
  request: JsonObject;
}

export interface MatchResult {
  matches: boolean;
  /** Set when the request must be refused (failurePolicy Fail): the message of the errors. */
  error?: string;
  /** The condition that was false. */
  failedCondition?: string;
}

export type MatchConditionMatcher = (input: MatchInput) => MatchResult;

interface Compiled {
  name: string;
  expression: string;
  program?: ParseResult;
  compileError?: string;
}

/** Compiles once; evaluation is per request. */
export function compileMatchConditions(conditions: readonly {name: string; expression: string}[], failurePolicy: FailurePolicy): MatchConditionMatcher {
  const env = kubernetesEnvironment();
  for (const variable of ['object', 'oldObject', 'request']) env.registerVariable(variable, 'dyn');
  const compiled: Compiled[] = conditions.map(({name, expression}) => {
    try {
      const program = env.parse(expression);
      const checked = program.check();
      if (!checked.valid) throw checked.error;
      return {name, expression, program};
    } catch (error) {
      return {name, expression, compileError: (error as Error).message.split('\n')[0]};
    }
  });
  return (input) => {
    const variables = {
      object: input.object ? dynValue(input.object) : null,
      oldObject: input.oldObject ? dynValue(input.oldObject) : null,
      request: dynValue(input.request as JsonValue),
    };
    const errors: string[] = [];
    for (const c of compiled) {
      if (c.compileError !== undefined) {
        errors.push(`compilation error: ${c.compileError}`);
        continue;
      }
      let value: unknown;
      try {
        value = c.program!(variables);
      } catch (error) {
        errors.push(`expression '${c.expression}' resulted in error: ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      // As upstream, only a false result excludes (a dyn expression yielding a non-bool does not).
      if (value === false) return {matches: false, failedCondition: c.name};
    }
    if (errors.length === 0) return {matches: true};
    if (failurePolicy === 'Ignore') return {matches: false};
    // Go's utilerrors.NewAggregate: one error alone, several in brackets.
    return {matches: false, error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`};
  };
}
