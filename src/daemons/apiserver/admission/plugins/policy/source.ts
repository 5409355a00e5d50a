/**
 * The policies and bindings an admission policy plugin evaluates: an in-memory view kept by a
 * store watch (the server's own objects, listed then watched), each policy compiled once per
 * generation (upstream's policy source with its informers). Without a watch (a server built
 * without one) the objects are listed on each request instead.
 */
import { isJsonObject, type JsonObject } from '../../../../../patch/types.js';
import { stringAt } from '../../../rest/objects.js';
import type { AdmissionObjects, AdmissionPluginContext, AdmissionWatch } from '../../interfaces.js';

export interface PolicyResources {
  group: string;
  policies: string;
  bindings: string;
}

export interface PolicyHook<C> {
  policy: JsonObject;
  compiled: C;
  bindings: JsonObject[];
}

const nameOf = (o: JsonObject) => stringAt(o, 'metadata', 'name') ?? '';
const versionOf = (o: JsonObject) => `${stringAt(o, 'metadata', 'uid') ?? ''}/${String((o.metadata as JsonObject | undefined)?.generation ?? stringAt(o, 'metadata', 'resourceVersion') ?? '')}`;

export class PolicySource<C> {
  private readonly policies = new Map<string, JsonObject>();
  private readonly bindings = new Map<string, JsonObject>();
  private readonly compiled = new Map<string, { version: string; compiled: C }>();
  private readonly watches: AdmissionWatch[] = [];

  constructor(
    private readonly resources: PolicyResources,
    private readonly compile: (policy: JsonObject) => C,
    private readonly objects: AdmissionObjects,
    watch: AdmissionPluginContext['watch'],
  ) {
    if (!watch) return;
    this.watches.push(
      watch(resources.group, resources.policies, {
        apply: (o) => this.policies.set(nameOf(o), o),
        remove: (o) => {
          this.policies.delete(nameOf(o));
          this.compiled.delete(nameOf(o));
        },
      }),
      watch(resources.group, resources.bindings, {
        apply: (o) => this.bindings.set(nameOf(o), o),
        remove: (o) => this.bindings.delete(nameOf(o)),
      }),
    );
  }

  get watched(): boolean {
    return this.watches.length > 0;
  }

  /**
   * Whether the first lists arrived, waiting up to `waitMs` for them (upstream's WaitForReady:
   * a request is refused rather than admitted unchecked while the view is empty).
   */
  async ready(waitMs = 1000): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    while (!this.watches.every((w) => w.synced)) {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  /** Every policy with at least one binding, compiled, with its bindings. */
  async hooks(): Promise<Array<PolicyHook<C>>> {
    let policies: Iterable<JsonObject> = this.policies.values();
    let bindings: Iterable<JsonObject> = this.bindings.values();
    if (!this.watched) {
      [policies, bindings] = await Promise.all([
        this.objects.list(this.resources.group, this.resources.policies),
        this.objects.list(this.resources.group, this.resources.bindings),
      ]);
    }
    const byPolicy = new Map<string, JsonObject[]>();
    for (const b of bindings) {
      const policyName = isJsonObject(b.spec) && typeof b.spec.policyName === 'string' ? b.spec.policyName : '';
      if (!policyName) continue;
      byPolicy.set(policyName, [...(byPolicy.get(policyName) ?? []), b]);
    }
    const hooks: Array<PolicyHook<C>> = [];
    for (const policy of policies) {
      const policyBindings = byPolicy.get(nameOf(policy));
      if (!policyBindings?.length) continue;
      policyBindings.sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
      hooks.push({ policy, compiled: this.compiledFor(policy), bindings: policyBindings });
    }
    return hooks.sort((a, b) => nameOf(a.policy).localeCompare(nameOf(b.policy)));
  }

  compiledFor(policy: JsonObject): C {
    const name = nameOf(policy);
    const version = versionOf(policy);
    const known = this.compiled.get(name);
    if (known && known.version === version) return known.compiled;
    const compiled = this.compile(policy);
    this.compiled.set(name, { version, compiled });
    return compiled;
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }
}
