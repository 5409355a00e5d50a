/**
 * ResourceQuota's plugin configuration (upstream's apis/resourcequota): `limitedResources`, the
 * resources whose consumption needs a covering quota. Accepted as upstream decodes it:
 * `apiserver.config.<domain>/v1` kind ResourceQuotaConfiguration, or the older
 * `resourcequota.admission.<domain>/v1beta1|v1alpha1` kind Configuration; strict (unknown fields
 * are errors, as upstream since 1.32). Errors name the plugin, the source and the field.
 */
import {names} from '../../../../../api/names.js';
import type {JsonObject, JsonValue} from '../../../../../patch/types.js';
import type {LimitedResource} from './check.js';

export interface ResourceQuotaConfiguration {
  limitedResources: LimitedResource[];
}

function accepted(): {apiVersion: string; kind: string}[] {
  const domain = names().domain;
  return [
    {apiVersion: `apiserver.config.${domain}/v1`, kind: 'ResourceQuotaConfiguration'},
    {apiVersion: `resourcequota.admission.${domain}/v1beta1`, kind: 'Configuration'},
    {apiVersion: `resourcequota.admission.${domain}/v1alpha1`, kind: 'Configuration'},
  ];
}

const isObject = (v: JsonValue | undefined): v is JsonObject => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

function unknownFields(value: JsonObject, known: readonly string[], path: string, problems: string[]): void {
  for (const key of Object.keys(value)) if (!known.includes(key)) problems.push(`unknown field "${path}${key}"`);
}

function stringList(value: JsonValue | undefined, path: string, problems: string[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    problems.push(`${path}: must be a list of strings`);
    return [];
  }
  return value as string[];
}

/** Parses and validates; throws an Error listing every problem, prefixed with the plugin and the source. */
export function parseResourceQuotaConfiguration(configuration: JsonObject | undefined, source = 'configuration'): ResourceQuotaConfiguration {
  if (!configuration) return {limitedResources: []};
  const problems: string[] = [];
  const typeOk = accepted().some((a) => a.apiVersion === configuration.apiVersion && a.kind === configuration.kind);
  if (!typeOk) {
    problems.push(
      `no kind ${JSON.stringify(configuration.kind ?? '')} is registered for version ${JSON.stringify(configuration.apiVersion ?? '')}; expected ${accepted().map((a) => `${a.apiVersion} ${a.kind}`).join(', or ')}`,
    );
  }
  unknownFields(configuration, ['apiVersion', 'kind', 'limitedResources'], '', problems);
  const limitedResources: LimitedResource[] = [];
  const list = configuration.limitedResources;
  if (list !== undefined && list !== null && !Array.isArray(list)) problems.push('limitedResources: must be a list');
  (Array.isArray(list) ? list : []).forEach((entry, i) => {
    const path = `limitedResources[${i}]`;
    if (!isObject(entry)) {
      problems.push(`${path}: must be an object`);
      return;
    }
    unknownFields(entry, ['apiGroup', 'resource', 'matchContains', 'matchScopes'], `${path}.`, problems);
    const resource = typeof entry.resource === 'string' ? entry.resource : '';
    if (!resource) problems.push(`${path}.resource: Required value`);
    const matchScopes = (Array.isArray(entry.matchScopes) ? entry.matchScopes : []).flatMap((scope, j) => {
      const scopePath = `${path}.matchScopes[${j}]`;
      if (!isObject(scope)) {
        problems.push(`${scopePath}: must be an object`);
        return [];
      }
      unknownFields(scope, ['scopeName', 'operator', 'values'], `${scopePath}.`, problems);
      const operator = typeof scope.operator === 'string' && scope.operator ? scope.operator : 'Exists';
      if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(operator)) {
        problems.push(`${scopePath}.operator: Unsupported value: ${JSON.stringify(operator)}: supported values: "DoesNotExist", "Exists", "In", "NotIn"`);
      }
      return [{scopeName: String(scope.scopeName ?? ''), operator, values: stringList(scope.values, `${scopePath}.values`, problems)}];
    });
    limitedResources.push({
      apiGroup: typeof entry.apiGroup === 'string' ? entry.apiGroup : '',
      resource,
      matchContains: stringList(entry.matchContains, `${path}.matchContains`, problems),
      matchScopes,
    });
  });
  if (problems.length) throw new Error(`admission plugin ResourceQuota: ${source}: ${problems.join('; ')}`);
  return {limitedResources};
}
