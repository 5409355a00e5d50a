/**
 * The schema's required fields as part of a kind's validation: upstream reports them among the
 * kind's other field errors in one 422, so they join the strategy's errors (deduplicated by field,
 * the strategy's own first) rather than failing earlier on their own.
 */
import type { FieldError } from '../../../../api/status.js';
import { validateAgainstSchema } from '../../../../api/schema/validate.js';
import type { ResourceInfo } from '../../../../api/resources.js';
import type { Strategy } from '../strategies.js';
import type { SchemaProvider } from './schema-registry.js';

function merged(own: FieldError[], required: FieldError[]): FieldError[] {
  if (required.length === 0) return own;
  const seen = new Set(own.map((e) => e.field));
  return [...own, ...required.filter((e) => !seen.has(e.field))];
}

export function withSchemaRequired(strategy: Strategy, info: ResourceInfo, provider: SchemaProvider, enabled: () => boolean): Strategy {
  // Custom resources: their CRD's structural schema validator reports required fields (custom-resources.ts).
  if (info.custom) return strategy;
  const required = (object: unknown): FieldError[] => {
    if (!enabled()) return [];
    const schema = provider.schemaFor(info.group, info.version, info.kind);
    return schema ? validateAgainstSchema(object, schema, { required: true }).required.filter((e) => e.type === 'FieldValueRequired') : [];
  };
  return {
    ...strategy,
    validate: (object) => merged(strategy.validate(object), required(object)),
    validateUpdate: (object, previous) => merged(strategy.validateUpdate(object, previous), required(object)),
  };
}
