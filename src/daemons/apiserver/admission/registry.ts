/**
 * Every admission plugin's factory by name (upstream's RegisterAllAdmissionPlugins). The order they
 * run in is plugin-names.ts's, whatever the order here; which of them run is the options' choice.
 * One line a plugin, so plugins arrive without touching each other.
 */
import type {AdmissionPluginFactory} from './interfaces.js';
import type {AdmissionPluginName} from './plugin-names.js';
import {NamespaceLifecycle} from './plugins/namespace-lifecycle.js';
import {AlwaysPullImages} from './plugins/always-pull-images.js';
import {createDefaultTolerationSeconds} from './plugins/default-toleration-seconds.js';
import {ExtendedResourceToleration} from './plugins/extended-resource-toleration.js';
import {createImagePolicyWebhook} from './plugins/image-policy-webhook.js';
import {LimitPodHardAntiAffinityTopology} from './plugins/limit-pod-hard-anti-affinity-topology.js';
import {createLimitRanger} from './plugins/limit-ranger.js';
import {createNodeRestriction} from './plugins/node-restriction.js';
import {createPodNodeSelector} from './plugins/pod-node-selector.js';
import {createPodTolerationRestriction} from './plugins/pod-toleration-restriction.js';
import {createPriority} from './plugins/priority.js';
import {createServiceAccount} from './plugins/service-account.js';
import {TaintNodesByCondition} from './plugins/taint-nodes-by-condition.js';

export const ADMISSION_PLUGIN_FACTORIES: {readonly [name in AdmissionPluginName]?: AdmissionPluginFactory} = {
  NamespaceLifecycle: (context) => new NamespaceLifecycle((name) => context.objects.get('', 'namespaces', '', name)),
  LimitPodHardAntiAffinityTopology: () => new LimitPodHardAntiAffinityTopology(),
  LimitRanger: createLimitRanger,
  ServiceAccount: createServiceAccount,
  NodeRestriction: createNodeRestriction,
  TaintNodesByCondition: () => new TaintNodesByCondition(),
  AlwaysPullImages: () => new AlwaysPullImages(),
  ImagePolicyWebhook: createImagePolicyWebhook,
  PodNodeSelector: createPodNodeSelector,
  Priority: createPriority,
  DefaultTolerationSeconds: createDefaultTolerationSeconds,
  PodTolerationRestriction: createPodTolerationRestriction,
  ExtendedResourceToleration: () => new ExtendedResourceToleration(),
};
