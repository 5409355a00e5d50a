/**
 * The admission chain: every plugin's mutating step in order, then every validating step, as
 * upstream runs them around the registry's own defaulting and validation (the registry calls
 * `admit` before its validation and `validate` after it). The plugins and their order come from
 * src/api/admission-plugins.ts and the admission options.
 */
import type {AdmissionAttributes, AdmissionPlugin, AdmissionReinvocation} from './interfaces.js';

export type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin} from './interfaces.js';
export {NamespaceLifecycle, immortalNamespaces} from './plugins/namespace-lifecycle.js';

/** What the registries call: the chain in effect (the server builds its chain at start and puts it in place). */
export interface AdmissionStage {
  admit(attributes: AdmissionAttributes): Promise<void>;
  validate(attributes: AdmissionAttributes): Promise<void>;
}

export class AdmissionChain implements AdmissionStage {
  constructor(readonly plugins: readonly AdmissionPlugin[]) {}

  /**
   * The mutating phase, run once more when a plugin asks (upstream's reinvoker: a webhook changed
   * the object after a reinvocable webhook had seen it).
   */
  async admit(attributes: AdmissionAttributes): Promise<void> {
    let requested = false;
    const reinvocation: AdmissionReinvocation & {isReinvoke: boolean} = {
      isReinvoke: false,
      requestReinvocation: () => void (requested = true),
      values: new Map(),
    };
    attributes.reinvocation = reinvocation;
    await this.admitOnce(attributes);
    if (!requested) return;
    reinvocation.isReinvoke = true;
    await this.admitOnce(attributes);
  }

  private async admitOnce(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) {
      if (!plugin.admit || !(plugin.handles?.(attributes.operation) ?? true)) continue;
      // Most plugins decide synchronously: only a promise is awaited (a tick per plugin and phase adds up on every write).
      const pending = plugin.admit(attributes);
      if (pending) await pending;
    }
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) {
      if (!plugin.validate || !(plugin.handles?.(attributes.operation) ?? true)) continue;
      const pending = plugin.validate(attributes);
      if (pending) await pending;
    }
  }

  async close(): Promise<void> {
    for (const plugin of this.plugins) await plugin.close?.();
  }
}
