/**
 * Which built-in resources a server serves, as upstream decides it: the default resource
 * configuration (stable versions on, beta and alpha versions off), `--runtime-config` merged on top
 * (api/all, api/ga, api/beta, api/alpha, then group/version, then group/version/resource), the
 * feature gates an API needs, and the emulation version (KEP-4330: a resource introduced after the
 * emulated release is not served, unless --emulation-forward-compatible or
 * --runtime-config-emulation-forward-compatible say otherwise).
 *
 * Pure: the catalog and the options in, the served resources (or upstream's error) out.
 */
import {compareVersions, formatVersion, type FeatureGates, type MinorVersion} from './feature-gates.js';
import {names, type NameSet} from './names.js';
import {groupVersionOf, type ResourceInfo} from './resources.js';

export interface ApiEnablementOptions {
  /** --runtime-config as given: key -> value ("" means true, as upstream's ConfigurationMap). */
  runtimeConfig: Readonly<Record<string, string>>;
  gates: FeatureGates;
  emulationVersion: MinorVersion;
  /** The release the binary is (upstream's binary version): alpha APIs warn when emulating another. */
  binaryVersion: MinorVersion;
  emulationForwardCompatible?: boolean;
  runtimeConfigEmulationForwardCompatible?: boolean;
}

export interface ApiEnablement {
  resources: ResourceInfo[];
  /** upstream's warnings (klog) for settings it accepts. */
  warnings: string[];
}

export class RuntimeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeConfigError';
  }
}

/** What upstream's API types carry as prerelease-lifecycle tags and storage providers as gate checks. */
interface Lifecycle {
  introduced: MinorVersion;
  gate?: string;
}

/**
 * The built-in resources introduced within the emulation window (n-3..n) and the gates their
 * storage needs, with the betas upstream still serves beside a newer GA version (their
 * prerelease-lifecycle `introduced` tags): --emulation-forward-compatible follows a beta served at
 * the emulated release to its GA version. Everything else in the catalog is older than 1.33 and
 * always available. VolumeAttributesClass and DRA storage are registered without their gates
 * upstream since they went GA (pkg/registry/{storage,resource}/rest), so no gate here either.
 */
function lifecycles(n: NameSet): Map<string, Lifecycle> {
  const v = (minor: number) => ({major: 1, minor});
  const g = n.groups;
  const dra = ['deviceclasses', 'resourceclaims', 'resourceclaimtemplates', 'resourceslices'];
  const table: [string, Lifecycle][] = [
    [`${g.coordination}/v1beta1/leasecandidates`, {introduced: v(33), gate: 'CoordinatedLeaderElection'}],
    [`${g.certificates}/v1beta1/clustertrustbundles`, {introduced: v(33), gate: 'ClusterTrustBundle'}],
    [`${g.networking}/v1beta1/servicecidrs`, {introduced: v(31)}],
    [`${g.networking}/v1beta1/ipaddresses`, {introduced: v(31)}],
    [`${g.networking}/v1/servicecidrs`, {introduced: v(33), gate: 'MultiCIDRServiceAllocator'}],
    [`${g.networking}/v1/ipaddresses`, {introduced: v(33), gate: 'MultiCIDRServiceAllocator'}],
    [`${g.admissionregistration}/v1beta1/mutatingadmissionpolicies`, {introduced: v(34), gate: 'MutatingAdmissionPolicy'}],
    [`${g.admissionregistration}/v1beta1/mutatingadmissionpolicybindings`, {introduced: v(34), gate: 'MutatingAdmissionPolicy'}],
    [`${g.storage}/v1beta1/volumeattributesclasses`, {introduced: v(31)}],
    [`${g.storage}/v1/volumeattributesclasses`, {introduced: v(34)}],
    ...dra.map((r): [string, Lifecycle] => [`${g.resource}/v1beta1/${r}`, {introduced: v(32)}]),
    ...dra.map((r): [string, Lifecycle] => [`${g.resource}/v1beta2/${r}`, {introduced: v(33)}]),
    ...dra.map((r): [string, Lifecycle] => [`${g.resource}/v1/${r}`, {introduced: v(34)}]),
  ];
  return new Map(table);
}

type Stage = 'ga' | 'beta' | 'alpha';

export function versionStage(version: string): Stage {
  if (/^v\d+alpha\d+$/.test(version)) return 'alpha';
  if (/^v\d+beta\d+$/.test(version)) return 'beta';
  return 'ga';
}

/** Kubernetes' version priority: GA above beta above alpha, higher numbers first. */
export function compareVersionPriority(a: string, b: string): number {
  const rank = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    return [m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
  return 0;
}

const MATCHERS: Record<string, (version: string) => boolean> = {
  'api/all': () => true,
  'api/ga': (v) => versionStage(v) === 'ga',
  'api/beta': (v) => versionStage(v) === 'beta',
  'api/alpha': (v) => versionStage(v) === 'alpha',
};

/** Go's strconv.ParseBool, with upstream's empty value meaning true. */
function runtimeConfigValue(key: string, value: string): boolean {
  if (value === '') return true;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new RuntimeConfigError(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
}

interface Key {
  key: string;
  group: string;
  version: string;
  resource?: string;
}

/** `group/version[/resource]`, with upstream's `api/v1` for the core group. */
function parseKey(key: string): Key {
  const tokens = key.split('/');
  if (tokens.length !== 2 && tokens.length !== 3) throw new RuntimeConfigError(`runtime-config invalid key ${key}`);
  const [group, version] = tokens[0] === 'api' && tokens[1] === 'v1' ? ['', 'v1'] : [tokens[0]!, tokens[1]!];
  if (version === '') throw new RuntimeConfigError(`runtime-config invalid key ${key}`);
  return {key, group, version, resource: tokens[2]};
}

const gvString = (group: string, version: string) => groupVersionOf({group, version});

/**
 * The resources served. Errors as upstream's APIEnablementOptions.Validate,
 * MergeAPIResourceConfigs and the resource expiration evaluator word them.
 */
export function enabledResources(all: readonly ResourceInfo[], options: ApiEnablementOptions, n: NameSet = names()): ApiEnablement {
  const config = options.runtimeConfig;
  const warnings: string[] = [];
  const keys = Object.keys(config);
  if (config['api/all'] === 'false' && keys.length === 1) throw new RuntimeConfigError('invalid key with only api/all=false');

  // Validate: every key names a known group (the matchers aside).
  const groups = new Set(all.map((r) => r.group));
  const parsed: Key[] = [];
  const unknown: string[] = [];
  for (const key of keys) {
    if (key in MATCHERS) continue;
    const k = parseKey(key);
    parsed.push(k);
    if (!groups.has(k.group) && !unknown.includes(k.group)) unknown.push(k.group);
  }
  if (unknown.length > 0) throw new RuntimeConfigError(`unknown api groups ${unknown.join(',')}`);

  // The default configuration, then the matchers in upstream's order.
  const versionEnabled = new Map<string, boolean>();
  for (const r of all) versionEnabled.set(gvString(r.group, r.version), versionStage(r.version) === 'ga');
  for (const matcher of Object.keys(MATCHERS)) {
    const value = config[matcher];
    if (value === undefined) continue;
    if (value !== 'true' && value !== 'false') throw new RuntimeConfigError(`invalid value ${matcher}=${value}`);
    for (const r of all) if (MATCHERS[matcher]!(r.version)) versionEnabled.set(gvString(r.group, r.version), value === 'true');
  }

  // group/version first, group/version/resource last (highest priority).
  const explicitVersions = new Map<string, boolean>();
  const explicitResources = new Map<string, boolean>();
  for (const k of parsed) {
    const gv = gvString(k.group, k.version);
    if (!versionEnabled.has(gv)) throw new RuntimeConfigError(`group version ${gv} that has not been registered`);
    const enabled = runtimeConfigValue(k.key, config[k.key]!);
    if (k.resource === undefined) explicitVersions.set(gv, enabled);
    else {
      if (!all.some((r) => r.group === k.group && r.version === k.version && r.plural === k.resource)) {
        warnings.push(`runtime-config names resource ${k.resource} that ${gv} does not have; ignored`);
      }
      explicitResources.set(`${gv}/${k.resource}`, enabled);
    }
  }
  for (const [gv, enabled] of explicitVersions) versionEnabled.set(gv, enabled);

  const life = lifecycles(n);
  const gated = (r: ResourceInfo) => {
    const gate = life.get(`${gvString(r.group, r.version)}/${r.plural}`)?.gate;
    return gate === undefined || options.gates.enabled(gate);
  };
  const configured = new Set(all.filter((r) => {
    const gv = gvString(r.group, r.version);
    return (explicitResources.get(`${gv}/${r.plural}`) ?? versionEnabled.get(gv)) === true && gated(r);
  }));
  // Forward compatibility may add what is off by default (a newer beta), never what runtime-config switched off.
  const explicitlyOff = (r: ResourceInfo) => {
    const gv = gvString(r.group, r.version);
    return (explicitResources.get(`${gv}/${r.plural}`) ?? explicitVersions.get(gv)) === false;
  };
  const candidates = options.emulationForwardCompatible ? all.filter((r) => configured.has(r) || (!explicitlyOff(r) && gated(r))) : [...configured];

  const served = removeUnintroduced(candidates, configured, options, life, explicitVersions, explicitResources);
  if (compareVersions(options.emulationVersion, options.binaryVersion) !== 0) {
    for (const gv of new Set(served.filter((r) => versionStage(r.version) === 'alpha').map((r) => gvString(r.group, r.version)))) {
      warnings.push(`alpha api enabled with emulated version ${formatVersion(options.emulationVersion)} instead of the binary's version ${formatVersion(options.binaryVersion)}, this is unsupported, proceed at your own risk: api=${gv}`);
    }
  }
  return {resources: all.filter((r) => served.includes(r)), warnings};
}

/**
 * upstream's removeUnintroducedKinds and EmulationForwardCompatibleResourceConfig, per group from the
 * lowest-priority version up: a configured resource introduced after the emulation version stays
 * only when runtime-config names it (or its version) and --runtime-config-emulation-forward-compatible
 * is on (naming it without that flag is an error). With --emulation-forward-compatible, a resource
 * served in a lower-priority non-alpha version is also served in every higher-priority version of
 * its group, introduced or not and configured or not (storage v1beta1 VolumeAttributesClasses bring
 * v1 at 1.33; resource v1beta1 brings v1beta2 and v1), unless runtime-config switches that one off.
 */
function removeUnintroduced(
  candidates: ResourceInfo[],
  configured: ReadonlySet<ResourceInfo>,
  options: ApiEnablementOptions,
  life: Map<string, Lifecycle>,
  explicitVersions: Map<string, boolean>,
  explicitResources: Map<string, boolean>,
): ResourceInfo[] {
  const at = options.emulationVersion;
  const kept: ResourceInfo[] = [];
  const byGroup = new Map<string, ResourceInfo[]>();
  for (const r of candidates) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  for (const [group, resources] of byGroup) {
    const versions = [...new Set(resources.map((r) => r.version))].sort(compareVersionPriority).reverse();
    const enabledNames = new Set<string>();
    for (const version of versions) {
      const gv = gvString(group, version);
      const inVersion = resources.filter((r) => r.version === version);
      const keptHere: ResourceInfo[] = [];
      for (const r of inVersion) {
        const forward = options.emulationForwardCompatible === true && enabledNames.has(r.plural);
        if (!configured.has(r)) {
          if (forward) keptHere.push(r);
          continue;
        }
        const introduced = life.get(`${gv}/${r.plural}`)?.introduced ?? {major: 0, minor: 0};
        let keep = compareVersions(at, introduced) >= 0 || forward;
        const resourceExplicit = explicitResources.get(`${gv}/${r.plural}`) === true;
        if (!keep && options.runtimeConfigEmulationForwardCompatible && (resourceExplicit || explicitVersions.get(gv) === true)) keep = true;
        if (!keep && resourceExplicit) {
          throw new RuntimeConfigError(
            `cannot enable resource ${gv}, Resource=${r.plural} in runtime-config because it is introduced at ${formatVersion(introduced)} after the current version ${formatVersion(at)}. Consider setting --runtime-config-emulation-forward-compatible=true`,
          );
        }
        if (keep) keptHere.push(r);
      }
      for (const r of keptHere) if (versionStage(version) !== 'alpha') enabledNames.add(r.plural);
      if (keptHere.length === 0 && explicitVersions.get(gv) === true) {
        throw new RuntimeConfigError(
          `cannot enable version ${gv} in runtime-config because all the resources have been introduced after the current version ${formatVersion(at)}. Consider setting --runtime-config-emulation-forward-compatible=true`,
        );
      }
      kept.push(...keptHere);
    }
  }
  return kept;
}
