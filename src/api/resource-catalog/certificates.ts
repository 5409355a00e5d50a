/** certificates/v1 CertificateSigningRequest (approval and status), v1beta1 ClusterTrustBundle. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {catalog, partialWriteSub} from './build.js';

export function certificatesResources(n: NameSet): ResourceInfo[] {
  return [
    ...catalog(n.groups.certificates, 'v1', [
      {
        kind: 'CertificateSigningRequest', plural: 'certificatesigningrequests', namespaced: false, shortNames: ['csr'], status: true,
        subresources: [partialWriteSub('approval', 'CertificateSigningRequest')],
      },
    ]),
    // Beta upstream (served there behind --runtime-config); the group's preferred version stays v1.
    ...catalog(n.groups.certificates, 'v1beta1', [{kind: 'ClusterTrustBundle', plural: 'clustertrustbundles', namespaced: false}]),
  ];
}
