/** Every group of the catalog, in upstream's discovery order of groups. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {authenticationResources, authorizationResources} from './access.js';
import {admissionregistrationResources} from './admissionregistration.js';
import {appsResources, autoscalingResources, policyResources} from './apps.js';
import {certificatesResources} from './certificates.js';
import {apiregistrationResources, coordinationResources, eventsResources, flowcontrolResources, nodeResources, resourceResources} from './cluster.js';
import {coreResources} from './core.js';
import {networkingResources} from './networking.js';
import {storageResources} from './storage.js';

export {withCoreSubresources} from './core.js';

export function catalogResources(n: NameSet): ResourceInfo[] {
  return [
    ...coreResources(n),
    ...apiregistrationResources(n),
    ...appsResources(n),
    ...eventsResources(n),
    ...authenticationResources(n),
    ...authorizationResources(n),
    ...autoscalingResources(n),
    ...certificatesResources(n),
    ...networkingResources(n),
    ...policyResources(n),
    ...storageResources(n),
    ...admissionregistrationResources(n),
    ...coordinationResources(n),
    ...nodeResources(n),
    ...flowcontrolResources(n),
    ...resourceResources(n),
  ];
}
