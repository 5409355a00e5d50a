/**
 * Every admission plugin's factory by name (upstream's RegisterAllAdmissionPlugins). The order they
 * run in is src/api/admission-plugins.ts's, whatever the order here; which of them run is the options' choice.
 * One line a plugin, so plugins arrive without touching each other.
 */
import type {AdmissionPluginFactory} from './interfaces.js';
import type {AdmissionPluginName} from '../../../api/admission-plugins.js';
import {NamespaceLifecycle} from './plugins/namespace-lifecycle.js';
import {MutatingAdmissionPolicyPlugin} from './plugins/mutating-admission-policy.js';
import {ValidatingAdmissionPolicyPlugin} from './plugins/validating-admission-policy.js';
import {AlwaysAdmit} from './plugins/always-admit.js';
import {AlwaysDeny} from './plugins/always-deny.js';
import {NamespaceAutoProvision} from './plugins/namespace-auto-provision.js';
import {NamespaceExists} from './plugins/namespace-exists.js';
import {DenyServiceExternalIPs} from './plugins/deny-service-external-ips.js';
import {DefaultStorageClass} from './plugins/default-storage-class.js';
import {DefaultIngressClass} from './plugins/default-ingress-class.js';
import {StorageObjectInUseProtection} from './plugins/storage-object-in-use-protection.js';
import {PersistentVolumeClaimResize} from './plugins/persistent-volume-claim-resize.js';
import {RuntimeClass} from './plugins/runtime-class.js';
import {CertificateApproval} from './plugins/certificate-approval.js';
import {CertificateSigning} from './plugins/certificate-signing.js';
import {CertificateSubjectRestriction} from './plugins/certificate-subject-restriction.js';
import {ClusterTrustBundleAttest} from './plugins/cluster-trust-bundle-attest.js';
import {createAdmissionWebhookPlugin} from './plugins/webhook/plugin.js';
import {OwnerReferencesPermissionEnforcement} from './plugins/owner-references-permission-enforcement.js';
import {PodTopologyLabels} from './plugins/pod-topology-labels.js';
import {PodResizeValidator} from './plugins/pod-resize-validator.js';
import {NodeDeclaredFeatureValidator} from './plugins/node-declared-feature-validator.js';
import {PodGroupProtection} from './plugins/pod-group-protection.js';
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
import {createEventRateLimit} from './plugins/event-rate-limit.js';
import {createResourceQuotaAdmission} from './plugins/resource-quota/index.js';
import {createPodSecurity} from './plugins/pod-security/index.js';

export const ADMISSION_PLUGIN_FACTORIES: {readonly [name in AdmissionPluginName]?: AdmissionPluginFactory} = {
  NamespaceLifecycle: (context) => new NamespaceLifecycle((name) => context.objects.get('', 'namespaces', '', name)),
  MutatingAdmissionPolicy: (context) => new MutatingAdmissionPolicyPlugin(context),
  ValidatingAdmissionPolicy: (context) => new ValidatingAdmissionPolicyPlugin(context),
  AlwaysAdmit: () => new AlwaysAdmit(),
  AlwaysDeny: () => new AlwaysDeny(),
  NamespaceAutoProvision: (context) => new NamespaceAutoProvision(context.objects),
  NamespaceExists: (context) => new NamespaceExists(context.objects),
  DenyServiceExternalIPs: () => new DenyServiceExternalIPs(),
  DefaultStorageClass: (context) => new DefaultStorageClass(context.objects),
  DefaultIngressClass: (context) => new DefaultIngressClass(context.objects),
  StorageObjectInUseProtection: () => new StorageObjectInUseProtection(),
  PersistentVolumeClaimResize: (context) => new PersistentVolumeClaimResize(context.objects),
  RuntimeClass: (context) => new RuntimeClass(context.objects),
  CertificateApproval: () => new CertificateApproval(),
  CertificateSigning: () => new CertificateSigning(),
  CertificateSubjectRestriction: () => new CertificateSubjectRestriction(),
  ClusterTrustBundleAttest: () => new ClusterTrustBundleAttest(),
  MutatingAdmissionWebhook: (context) => createAdmissionWebhookPlugin(context, true),
  ValidatingAdmissionWebhook: (context) => createAdmissionWebhookPlugin(context, false),
  OwnerReferencesPermissionEnforcement: (context) => new OwnerReferencesPermissionEnforcement(context.resourcesForKind),
  PodTopologyLabels: (context) => new PodTopologyLabels(context.objects),
  PodResizeValidator: (context) => new PodResizeValidator(context.objects),
  NodeDeclaredFeatureValidator: () => new NodeDeclaredFeatureValidator(),
  PodGroupProtection: () => new PodGroupProtection(),
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
  EventRateLimit: createEventRateLimit,
  ResourceQuota: createResourceQuotaAdmission,
  PodSecurity: createPodSecurity,
};
