/**
 * Builds the admission chain at start: the enabled plugins (enabled-plugins.ts) in upstream's
 * order, each from its factory (registry.ts) with its configuration from the configuration file
 * (config-file.ts), as upstream's admission.Plugins.NewFromPlugins. A plugin asked for that has
 * no factory stops the start, except default plugins while some are not built yet: those are
 * skipped with one warning naming them, so the default set keeps working as plugins arrive.
 */
import {AdmissionChain} from './chain.js';
import type {AdmissionObjects, AdmissionPlugin, AdmissionPluginContext, AdmissionPluginFactory} from './interfaces.js';
import {DEFAULT_ON_ADMISSION_PLUGINS, type AdmissionPluginName} from '../../../api/admission-plugins.js';
import type {PluginConfiguration} from './config-file.js';
import type {Clock} from '../../shared/clock.js';
import type {ResourceInfo} from '../../../api/resources.js';

export interface AdmissionBuildOptions {
  /** The plugins to run, in order (enabledAdmissionPlugins). */
  plugins: readonly AdmissionPluginName[];
  /** The configuration file's entries by plugin name. */
  configurations?: ReadonlyMap<string, PluginConfiguration>;
  factories: {readonly [name in AdmissionPluginName]?: AdmissionPluginFactory};
  objects: AdmissionObjects;
  /** Keeps plugins' in-memory views of configuration objects (watch.ts). */
  watch?: AdmissionPluginContext['watch'];
  clock: Clock;
  /** The resources served now (custom resources included), for plugins that match equivalent versions. */
  resources?(): readonly ResourceInfo[];
  serverOptions?: Readonly<Record<string, unknown>>;
  /** Upstream's RESTMapper: the served resources of a kind (none when not given). */
  resourcesForKind?: AdmissionPluginContext['resourcesForKind'];
  log(message: string, ...keysAndValues: unknown[]): void;
  warn(message: string): void;
}

export async function buildAdmissionChain(options: AdmissionBuildOptions): Promise<AdmissionChain> {
  const missing = options.plugins.filter((name) => !options.factories[name]);
  const missingExplicit = missing.filter((name) => !DEFAULT_ON_ADMISSION_PLUGINS.has(name));
  if (missingExplicit.length) {
    throw new Error(`admission plugin${missingExplicit.length > 1 ? 's' : ''} ${missingExplicit.join(', ')} ${missingExplicit.length > 1 ? 'are' : 'is'} not built yet`);
  }
  const skipped = missing.filter((name) => DEFAULT_ON_ADMISSION_PLUGINS.has(name));
  if (skipped.length) options.warn(`Admission plugins of the default set not built yet, skipped: ${skipped.join(', ')}`);
  const plugins: AdmissionPlugin[] = [];
  for (const name of options.plugins) {
    const factory = options.factories[name];
    if (!factory) continue;
    const configured = options.configurations?.get(name);
    try {
      plugins.push(await factory({
        configuration: configured?.configuration,
        configurationSource: configured?.source,
        objects: options.objects,
        watch: options.watch,
        clock: options.clock,
        resources: options.resources,
        serverOptions: options.serverOptions ?? {},
        resourcesForKind: options.resourcesForKind ?? (() => []),
        log: (message, ...kv) => options.log(message, 'plugin', name, ...kv),
      }));
    } catch (error) {
      // Whatever the plugins built so far started is stopped: the server does not start.
      await new AdmissionChain(plugins).close().catch(() => undefined);
      const message = (error as Error).message;
      throw new Error(message.includes(name) ? message : `admission plugin ${name}: ${message}`);
    }
  }
  if (options.configurations) {
    const unused = [...options.configurations.keys()].filter((name) => !options.plugins.includes(name as AdmissionPluginName));
    if (unused.length) options.log('Admission configuration for plugins that are not enabled', 'plugins', unused.join(','));
  }
  return new AdmissionChain(plugins);
}
