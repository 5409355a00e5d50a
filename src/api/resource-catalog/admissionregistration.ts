/** admissionregistration/v1 webhook configurations and validating admission policies; v1beta1 mutating admission policies. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {API_EXTENSIONS, catalog} from './build.js';

export function admissionregistrationResources(n: NameSet): ResourceInfo[] {
  const group = n.groups.admissionregistration;
  return [
    ...catalog(group, 'v1', [
      {kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false, categories: API_EXTENSIONS},
      {kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies', namespaced: false, categories: API_EXTENSIONS, status: true},
      {kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings', namespaced: false, categories: API_EXTENSIONS},
      {kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false, categories: API_EXTENSIONS},
    ]),
    ...catalog(group, 'v1beta1', [
      {kind: 'MutatingAdmissionPolicy', plural: 'mutatingadmissionpolicies', namespaced: false, categories: API_EXTENSIONS},
      {kind: 'MutatingAdmissionPolicyBinding', plural: 'mutatingadmissionpolicybindings', namespaced: false, categories: API_EXTENSIONS},
    ]),
  ];
}
