/** storage/v1: the six kinds of upstream's storage group. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {catalog} from './build.js';

export function storageResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.storage, 'v1', [
    {kind: 'CSIDriver', plural: 'csidrivers', namespaced: false},
    {kind: 'CSINode', plural: 'csinodes', namespaced: false},
    {kind: 'CSIStorageCapacity', plural: 'csistoragecapacities', namespaced: true},
    {kind: 'StorageClass', plural: 'storageclasses', namespaced: false, shortNames: ['sc']},
    {kind: 'VolumeAttachment', plural: 'volumeattachments', namespaced: false, status: true},
    {kind: 'VolumeAttributesClass', plural: 'volumeattributesclasses', namespaced: false, shortNames: ['vac']},
  ]);
}
