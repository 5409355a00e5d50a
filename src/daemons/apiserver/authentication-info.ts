/**
 * The `start-cluster-authentication-info-controller` post-start hook: publishes the client CA the
 * API server trusts in the ConfigMap `extension-apiserver-authentication` of the system namespace (`orch-system`)
 * (`client-ca-file`) and the front proxy's (`requestheader-*`), as the seed describes, so components can verify callers the same way.
 * Created if missing, updated when the CA changed.
 */
import {RegistryStore} from './rest/registry-store.js';
import {AdmissionChain} from './admission/chain.js';
import {builtinResource, type ResourceInfo} from '../../api/resources.js';
import {names} from '../../api/names.js';
import {ApiError} from '../../api/status.js';
import {systemClock} from './rest/types.js';
import type {Store} from './storage/store.js';
import type {JsonObject} from '../../patch/types.js';

/** In the name set's system namespace (`orch-system`, `kube-system`). */
export const authenticationConfigMap = () => ({namespace: names().namespaces.system, name: 'extension-apiserver-authentication'});
const SYSTEM_WRITE = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'orch-apiserver'};

/** The front proxy's settings, published as upstream does (lists as JSON arrays). */
export interface RequestHeaderInfo {
  caPems: string[];
  options: {allowedNames: string[]; usernameHeaders: string[]; groupHeaders: string[]; extraHeaderPrefixes: string[]; uidHeaders: string[]};
}

export async function publishAuthenticationInfo(store: Store, keyPrefix: string, clientCaPems: readonly string[], requestHeader?: RequestHeaderInfo): Promise<void> {
  const info = builtinResource('', 'configmaps') as ResourceInfo;
  const registry = new RegistryStore(info, {store, clock: systemClock, keyPrefix, admission: new AdmissionChain([])});
  const {namespace, name} = authenticationConfigMap();
  const data: Record<string, string> = {'client-ca-file': clientCaPems.join('')};
  if (requestHeader) {
    const o = requestHeader.options;
    Object.assign(data, {
      'requestheader-allowed-names': JSON.stringify(o.allowedNames),
      'requestheader-client-ca-file': requestHeader.caPems.join(''),
      'requestheader-extra-headers-prefix': JSON.stringify(o.extraHeaderPrefixes),
      'requestheader-group-headers': JSON.stringify(o.groupHeaders),
      'requestheader-uid-headers': JSON.stringify(o.uidHeaders),
      'requestheader-username-headers': JSON.stringify(o.usernameHeaders),
    });
  }
  const wanted = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, namespace}, data};
  try {
    await registry.create(namespace, wanted as JsonObject, SYSTEM_WRITE);
  } catch (error) {
    if (!(error instanceof ApiError && error.status.reason === 'AlreadyExists')) throw error;
    const current = await registry.get(namespace, name);
    if (JSON.stringify(current.data) === JSON.stringify(data)) return;
    await registry.update(namespace, name, SYSTEM_WRITE, (latest) => ({...latest, data}) as JsonObject);
  }
}
