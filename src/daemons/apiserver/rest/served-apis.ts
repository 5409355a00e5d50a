/**
 * The built-in resources this server serves: the catalog filtered by --runtime-config, the feature
 * gates and the emulation version (src/api/api-enablement.ts). A bad --runtime-config stops the
 * start with upstream's message. Discovery, routing and the local APIServices all read the result.
 */
import {enabledResources, RuntimeConfigError} from '../../../api/api-enablement.js';
import {FeatureGates} from '../../../api/feature-gates.js';
import {builtinResources, type ResourceInfo} from '../../../api/resources.js';
import {EMULATED_KUBERNETES} from '../../../lib/version.js';
import {UserError} from '../../../lib/errors.js';
import type {ApiServerConfig} from '../server.js';

export function servedBuiltins(c: Pick<ApiServerConfig, 'apis' | 'featureGates' | 'effectiveVersion'>): {resources: ResourceInfo[]; warnings: string[]} {
  const binaryVersion = c.effectiveVersion?.binary ?? EMULATED_KUBERNETES;
  const emulationVersion = c.effectiveVersion?.emulation ?? binaryVersion;
  try {
    return enabledResources(builtinResources(), {
      runtimeConfig: c.apis?.runtimeConfig ?? {},
      gates: c.featureGates ?? new FeatureGates({}, {emulationVersion}),
      emulationVersion,
      binaryVersion,
      emulationForwardCompatible: c.apis?.emulationForwardCompatible,
      runtimeConfigEmulationForwardCompatible: c.apis?.runtimeConfigEmulationForwardCompatible,
    });
  } catch (error) {
    if (error instanceof RuntimeConfigError) throw new UserError(`invalid --runtime-config: ${error.message}`);
    throw error;
  }
}
