/**
 * storage/v1: the six kinds of upstream's storage group; storage/v1beta1 VolumeAttributesClass, which
 * upstream still serves (off by default, as every beta), stored as the v1 object it equals.
 */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {catalog} from './build.js';

export function storageResources(n: NameSet): ResourceInfo[] {
  const vac = {kind: 'VolumeAttributesClass', plural: 'volumeattributesclasses', namespaced: false, shortNames: ['vac']};
  return [...catalog(n.groups.storage, 'v1', [
    {kind: 'CSIDriver', plural: 'csidrivers', namespaced: false},
    {kind: 'CSINode', plural: 'csinodes', namespaced: false},
    {kind: 'CSIStorageCapacity', plural: 'csistoragecapacities', namespaced: true},
    {kind: 'StorageClass', plural: 'storageclasses', namespaced: false, shortNames: ['sc']},
    {kind: 'VolumeAttachment', plural: 'volumeattachments', namespaced: false, status: true},
    vac,
  ]), ...catalog(n.groups.storage, 'v1beta1', [{...vac, storageVersion: {group: n.groups.storage, version: 'v1', kind: vac.kind}}])];
}
