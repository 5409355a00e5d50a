/**
 * PodTolerationRestriction: a new pod gets its namespace's default tolerations (the
 * `scheduler.alpha.<labelDomain>/defaultTolerations` annotation, else the configuration's `default`),
 * every pod that is not BestEffort tolerates memory pressure, and a pod's tolerations must stay
 * within its namespace's whitelist (`.../tolerationsWhitelist`, else the configuration's
 * `whitelist`) (upstream's podtolerationrestriction).
 *
 * Configuration: apiVersion podtolerationrestriction.admission.<domain>/v1alpha1, kind Configuration,
 * `default` and `whitelist` lists of tolerations.
 */
import {names} from '../../../../api/names.js';
import {notFound, plainServerError} from '../../../../api/status.js';
import {parseAmount} from '../../../../api/quantities.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../../patch/types.js';
import {stringAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {containersOf, mergeTolerations, podProper, specOf, tolerationJson, tolerationsOf, toToleration, verifyAgainstWhitelist, type Toleration} from './pod-helpers.js';

export interface TolerationRestrictionConfig {
  default?: Toleration[];
  whitelist?: Toleration[];
}

const OPERATORS = ['Equal', 'Exists'];
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** The problems of a toleration list, as upstream's ValidateTolerations words them. */
function tolerationProblems(list: JsonValue, path: string): string[] {
  if (!Array.isArray(list)) return [`${path}: must be a list of tolerations`];
  const problems: string[] = [];
  list.forEach((item, i) => {
    const at = `${path}[${i}]`;
    if (!isJsonObject(item)) return problems.push(`${at}: must be an object`);
    const t = toToleration(item);
    if (t.operator !== undefined && !OPERATORS.includes(t.operator)) problems.push(`${at}.operator: Unsupported value: "${t.operator}": supported values: "Equal", "Exists"`);
    if (t.effect !== undefined && !EFFECTS.includes(t.effect)) problems.push(`${at}.effect: Unsupported value: "${t.effect}": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`);
    if (t.key === undefined && t.operator !== 'Exists') problems.push(`${at}.operator: Invalid value: "${t.operator ?? ''}": operator must be Exists when \`key\` is empty, which means "match all values and all keys"`);
    if (t.operator === 'Exists' && t.value !== undefined) problems.push(`${at}.operator: Invalid value: "${t.value}": value must be empty when \`operator\` is 'Exists'`);
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') problems.push(`${at}.effect: Invalid value: "${t.effect ?? ''}": effect must be 'NoExecute' when \`tolerationSeconds\` is set`);
    return undefined;
  });
  return problems;
}

/** Reads and checks the configuration; throws naming the plugin and the problem. */
export function parseTolerationRestrictionConfig(configuration: JsonObject | undefined, source = 'configuration'): TolerationRestrictionConfig {
  if (configuration === undefined) return {};
  const fail = (problem: string) => new Error(`PodTolerationRestriction: ${source}: ${problem}`);
  const group = names().podAdmission.tolerationRestrictionGroup;
  const apiVersion = configuration.apiVersion;
  if (apiVersion !== `${group}/v1alpha1` && apiVersion !== `${group}/v1`) throw fail(`apiVersion must be ${group}/v1alpha1, got ${JSON.stringify(apiVersion ?? '')}`);
  if (configuration.kind !== 'Configuration') throw fail(`kind must be Configuration, got ${JSON.stringify(configuration.kind ?? '')}`);
  const out: TolerationRestrictionConfig = {};
  const problems: string[] = [];
  for (const key of ['default', 'whitelist'] as const) {
    const value = configuration[key];
    if (value === undefined || value === null) continue;
    const found = tolerationProblems(value, key);
    problems.push(...found);
    if (found.length === 0) out[key] = (value as JsonValue[]).map(toToleration);
  }
  if (problems.length) throw fail(`invalid configuration: ${problems.join(', ')}`);
  return out;
}

/**
 * A namespace annotation's tolerations: undefined when absent, [] when empty, else its JSON list;
 * throws the JSON error (upstream answers it as a 500).
 */
export function namespaceTolerations(namespace: JsonObject, key: string): Toleration[] | undefined {
  const text = stringAt(namespace, 'metadata', 'annotations', key);
  if (text === undefined) return undefined;
  if (text === '') return [];
  const parsed = JSON.parse(text) as JsonValue;
  if (!Array.isArray(parsed)) throw new Error(`json: cannot unmarshal ${typeof parsed} into Go value of type []v1.Toleration`);
  return parsed.map(toToleration);
}

/** Upstream's ComputePodQOS: BestEffort when no container requests or limits cpu or memory (above zero). */
export function isBestEffort(pod: JsonObject): boolean {
  for (const {container} of containersOf(specOf(pod), ['initContainers', 'containers'])) {
    const resources = isJsonObject(container.resources) ? container.resources : {};
    for (const list of [resources.requests, resources.limits]) {
      if (!isJsonObject(list)) continue;
      for (const name of ['cpu', 'memory']) {
        const value = list[name];
        if (value === undefined || value === null) continue;
        try {
          if (parseAmount(String(value)).milli > 0n) return false;
        } catch {
          return false;
        }
      }
    }
  }
  return true;
}

/** The tolerations a pod is admitted with: its own merged with the namespace's (on create) and memory pressure. */
export function tolerationsToAdd(onCreate: boolean, fromNamespace: Toleration[] | undefined, config: TolerationRestrictionConfig, bestEffort: boolean): Toleration[] {
  const extra: Toleration[] = onCreate ? [...(fromNamespace ?? config.default ?? [])] : [];
  if (!bestEffort) extra.push({key: names().taints.memoryPressure, operator: 'Exists', effect: 'NoSchedule'});
  return extra;
}

export class PodTolerationRestriction implements AdmissionPlugin {
  readonly name = 'PodTolerationRestriction';

  constructor(
    private readonly config: TolerationRestrictionConfig,
    private readonly getNamespace: (name: string) => Promise<JsonObject | undefined>,
  ) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  private async namespace(name: string): Promise<JsonObject> {
    const found = await this.getNamespace(name);
    if (!found) throw notFound({group: '', resource: 'namespaces'}, name);
    return found;
  }

  private async annotation(namespace: string, key: string): Promise<Toleration[] | undefined> {
    const object = await this.namespace(namespace);
    try {
      return namespaceTolerations(object, key);
    } catch (error) {
      throw plainServerError((error as Error).message);
    }
  }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const pod = podProper(attributes);
    if (!pod) return;
    const onCreate = attributes.operation === 'CREATE';
    const fromNamespace = onCreate ? await this.annotation(attributes.namespace, names().podAdmission.defaultTolerations) : undefined;
    const extra = tolerationsToAdd(onCreate, fromNamespace, this.config, isBestEffort(pod));
    if (extra.length > 0) {
      const spec = specOf(pod);
      spec.tolerations = mergeTolerations(tolerationsOf(spec), extra).map(tolerationJson);
    }
    await this.validate(attributes);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const pod = podProper(attributes);
    if (!pod) return;
    const tolerations = tolerationsOf(specOf(pod));
    if (tolerations.length === 0) return;
    let whitelist = await this.annotation(attributes.namespace, names().podAdmission.tolerationsWhitelist);
    let scope = 'namespace';
    if (whitelist === undefined) {
      whitelist = this.config.whitelist ?? [];
      scope = 'cluster';
    }
    if (!verifyAgainstWhitelist(tolerations, whitelist)) {
      // Upstream returns a plain error here, which reaches the client as a 500 without a reason.
      throw plainServerError(`pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`);
    }
  }
}

export const createPodTolerationRestriction = (context: AdmissionPluginContext): PodTolerationRestriction =>
  new PodTolerationRestriction(parseTolerationRestrictionConfig(context.configuration, context.configurationSource), (name) => context.objects.get('', 'namespaces', '', name));
