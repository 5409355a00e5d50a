/**
 * Messages of the kinds kubectl's typed commands send beyond the first groups (field numbers of
 * k8s.io/api's generated.proto): autoscaling/v1 HorizontalPodAutoscaler (`kubectl autoscale`), networking/v1 Ingress (`kubectl create ingress`), policy/v1
 * PodDisruptionBudget (`create pdb`) and Eviction (`drain`), scheduling/v1 PriorityClass
 * (`create priorityclass`), core/v1 ResourceQuota (`create quota`), certificates/v1
 * CertificateSigningRequest (`certificate approve|deny`), authentication/v1 SelfSubjectReview
 * (`auth whoami`), TokenRequest (`create token`) and authorization/v1's access reviews (`auth can-i`). User `extra` maps
 * (map<string, ExtraValue>) are left out: their JSON form is a list per key, which the table
 * language does not express, and kubectl's commands send none.
 */
import type { SchemaTables } from '../schema.js';

export const CATALOG_SCHEMAS: SchemaTables = {
  // networking/v1
  Ingress: { 1: 'metadata ObjectMeta', 2: 'spec IngressSpec', 3: 'status IngressStatus' },
  IngressSpec: { 1: 'defaultBackend *IngressBackend', 2: 'tls []IngressTLS', 3: 'rules []IngressRule', 4: 'ingressClassName *string' },
  IngressBackend: { 3: 'resource *TypedLocalObjectReference', 4: 'service *IngressServiceBackend' },
  IngressServiceBackend: { 1: 'name string required', 2: 'port ServiceBackendPort' },
  ServiceBackendPort: { 1: 'name string', 2: 'number int32' },
  IngressTLS: { 1: 'hosts []string', 2: 'secretName string' },
  IngressRule: { 1: 'host string', 2: 'ingressRuleValue IngressRuleValue inline' },
  IngressRuleValue: { 1: 'http *HTTPIngressRuleValue' },
  HTTPIngressRuleValue: { 1: 'paths []HTTPIngressPath required' },
  HTTPIngressPath: { 1: 'path string', 2: 'backend IngressBackend required', 3: 'pathType *string' },
  IngressStatus: { 1: 'loadBalancer IngressLoadBalancerStatus' },
  IngressLoadBalancerStatus: { 1: 'ingress []IngressLoadBalancerIngress' },
  IngressLoadBalancerIngress: { 1: 'ip string', 2: 'hostname string', 4: 'ports []IngressPortStatus' },
  IngressPortStatus: { 1: 'port int32 required', 2: 'protocol string required', 3: 'error *string' },

  // autoscaling/v1 (`kubectl autoscale`)
  HorizontalPodAutoscaler: { 1: 'metadata ObjectMeta', 2: 'spec HorizontalPodAutoscalerSpec', 3: 'status HorizontalPodAutoscalerStatus' },
  HorizontalPodAutoscalerSpec: {
    1: 'scaleTargetRef CrossVersionObjectReference required', 2: 'minReplicas *int32', 3: 'maxReplicas int32 required', 4: 'targetCPUUtilizationPercentage *int32',
  },
  CrossVersionObjectReference: { 1: 'kind string required', 2: 'name string required', 3: 'apiVersion string' },
  HorizontalPodAutoscalerStatus: {
    1: 'observedGeneration *int64', 2: 'lastScaleTime *Time', 3: 'currentReplicas int32 required', 4: 'desiredReplicas int32 required',
    5: 'currentCPUUtilizationPercentage *int32',
  },

  // policy/v1
  PodDisruptionBudget: { 1: 'metadata ObjectMeta', 2: 'spec PodDisruptionBudgetSpec', 3: 'status PodDisruptionBudgetStatus' },
  PodDisruptionBudgetSpec: {
    1: 'minAvailable *IntOrString', 2: 'selector *LabelSelector', 3: 'maxUnavailable *IntOrString', 4: 'unhealthyPodEvictionPolicy *string',
  },
  PodDisruptionBudgetStatus: {
    1: 'observedGeneration int64', 2: 'disruptedPods map[string]Time', 3: 'disruptionsAllowed int32 required', 4: 'currentHealthy int32 required',
    5: 'desiredHealthy int32 required', 6: 'expectedPods int32 required', 7: 'conditions []Condition',
  },
  Eviction: { 1: 'metadata ObjectMeta', 2: 'deleteOptions *DeleteOptions' },
  DeleteOptions: {
    1: 'gracePeriodSeconds *int64', 2: 'preconditions *Preconditions', 3: 'orphanDependents *bool', 4: 'propagationPolicy *string', 5: 'dryRun []string',
  },
  Preconditions: { 1: 'uid *string', 2: 'resourceVersion *string' },

  // scheduling/v1
  PriorityClass: { 1: 'metadata ObjectMeta', 2: 'value int32 required', 3: 'globalDefault bool', 4: 'description string', 5: 'preemptionPolicy *string' },

  // core/v1
  ResourceQuota: { 1: 'metadata ObjectMeta', 2: 'spec ResourceQuotaSpec', 3: 'status ResourceQuotaStatus' },
  ResourceQuotaSpec: { 1: 'hard map[string]Quantity', 2: 'scopes []string', 3: 'scopeSelector *ScopeSelector' },
  ScopeSelector: { 1: 'matchExpressions []ScopedResourceSelectorRequirement' },
  ScopedResourceSelectorRequirement: { 1: 'scopeName string required', 2: 'operator string required', 3: 'values []string' },
  ResourceQuotaStatus: { 1: 'hard map[string]Quantity', 2: 'used map[string]Quantity' },

  // certificates/v1
  CertificateSigningRequest: { 1: 'metadata ObjectMeta', 2: 'spec CertificateSigningRequestSpec required', 3: 'status CertificateSigningRequestStatus' },
  CertificateSigningRequestSpec: {
    1: 'request []byte required', 2: 'username string', 3: 'uid string', 4: 'groups []string', 5: 'usages []string', 7: 'signerName string required',
    8: 'expirationSeconds *int32',
  },
  CertificateSigningRequestStatus: { 1: 'conditions []CertificateSigningRequestCondition', 2: 'certificate []byte' },
  CertificateSigningRequestCondition: {
    1: 'type string required', 2: 'reason string', 3: 'message string', 4: 'lastUpdateTime Time', 5: 'lastTransitionTime Time', 6: 'status string required',
  },

  // authentication/v1
  SelfSubjectReview: { 1: 'metadata ObjectMeta', 2: 'status SelfSubjectReviewStatus' },
  SelfSubjectReviewStatus: { 1: 'userInfo UserInfo' },
  UserInfo: { 1: 'username string', 2: 'uid string', 3: 'groups []string' },
  TokenReview: { 1: 'metadata ObjectMeta', 2: 'spec TokenReviewSpec required' },
  TokenReviewSpec: { 1: 'token string', 2: 'audiences []string' },
  // `kubectl create token` (status is never sent by a client).
  TokenRequest: { 1: 'metadata ObjectMeta', 2: 'spec TokenRequestSpec required' },
  TokenRequestSpec: { 1: 'audiences []string', 3: 'boundObjectRef *BoundObjectReference', 4: 'expirationSeconds *int64' },
  BoundObjectReference: { 1: 'kind string', 2: 'apiVersion string', 3: 'name string', 4: 'uid string' },

  // authorization/v1
  SelfSubjectAccessReview: { 1: 'metadata ObjectMeta', 2: 'spec SelfSubjectAccessReviewSpec required', 3: 'status SubjectAccessReviewStatus' },
  SelfSubjectAccessReviewSpec: { 1: 'resourceAttributes *ResourceAttributes', 2: 'nonResourceAttributes *NonResourceAttributes' },
  SubjectAccessReview: { 1: 'metadata ObjectMeta', 2: 'spec SubjectAccessReviewSpec required', 3: 'status SubjectAccessReviewStatus' },
  LocalSubjectAccessReview: { 1: 'metadata ObjectMeta', 2: 'spec SubjectAccessReviewSpec required', 3: 'status SubjectAccessReviewStatus' },
  SubjectAccessReviewSpec: {
    1: 'resourceAttributes *ResourceAttributes', 2: 'nonResourceAttributes *NonResourceAttributes', 3: 'user string', 4: 'groups []string', 6: 'uid string',
  },
  ResourceAttributes: {
    1: 'namespace string', 2: 'verb string', 3: 'group string', 4: 'version string', 5: 'resource string', 6: 'subresource string', 7: 'name string',
  },
  NonResourceAttributes: { 1: 'path string', 2: 'verb string' },
  SubjectAccessReviewStatus: { 1: 'allowed bool required', 2: 'reason string', 3: 'evaluationError string', 4: 'denied bool' },
  SelfSubjectRulesReview: { 1: 'metadata ObjectMeta', 2: 'spec SelfSubjectRulesReviewSpec required' },
  SelfSubjectRulesReviewSpec: { 1: 'namespace string' },
};
