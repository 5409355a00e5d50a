/**
 * The admission plugins of the seed, in upstream's execution order (kube-apiserver's
 * AllOrderedPlugins: the newer plugins before the policies and webhooks; webhooks, ResourceQuota and
 * AlwaysDeny last), and the ones on by default. Pure data: the option tables read it too.
 */
export const ADMISSION_PLUGIN_ORDER = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'NodeDeclaredFeatureValidator',
  'PodResizeValidator',
  'PodGroupProtection',
  // Policies, webhooks, ResourceQuota and AlwaysDeny go last, as upstream.
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
] as const;

export type AdmissionPluginName = (typeof ADMISSION_PLUGIN_ORDER)[number];

/** The seed's default set ("Enabled by default"). */
export const DEFAULT_ON_ADMISSION_PLUGINS: ReadonlySet<AdmissionPluginName> = new Set<AdmissionPluginName>([
  'NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority',
  'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PodGroupProtection',
  'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning',
  'ClusterTrustBundleAttest', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'PodTopologyLabels',
  'NodeDeclaredFeatureValidator', 'PodResizeValidator', 'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota',
]);

/** The names sorted, as the option tables and error messages list them. */
export const ADMISSION_PLUGIN_NAMES_SORTED: readonly AdmissionPluginName[] = [...ADMISSION_PLUGIN_ORDER].sort();
