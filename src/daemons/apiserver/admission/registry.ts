/**
 * Every admission plugin's factory by name (upstream's RegisterAllAdmissionPlugins). The order they
 * run in is plugin-names.ts's, whatever the order here; which of them run is the options' choice.
 * One line a plugin, so plugins arrive without touching each other.
 */
import type {AdmissionPluginFactory} from './interfaces.js';
import type {AdmissionPluginName} from './plugin-names.js';
import {NamespaceLifecycle} from './plugins/namespace-lifecycle.js';

export const ADMISSION_PLUGIN_FACTORIES: {readonly [name in AdmissionPluginName]?: AdmissionPluginFactory} = {
  NamespaceLifecycle: (context) => new NamespaceLifecycle((name) => context.objects.get('', 'namespaces', '', name)),
};
