/**
 * The streaming endpoints' view of the process runtime: a pod by namespace and name (the pods the
 * agent runs), then its containers' exec and attach, in the kubelet's words when there is none.
 */
import type {ProcessRuntime} from '../runtime/runtime.js';
import type {StreamingProviders} from './server.js';

const MISSING = {error: 'pod does not exist'};

export function runtimeStreamingProviders(runtime: ProcessRuntime, podUid: (namespace: string, name: string) => string | undefined): StreamingProviders {
  return {
    pod: (namespace, name) => {
      const uid = podUid(namespace, name);
      return uid ? {podRef: `${name}_${namespace}`, uid} : {...MISSING, code: 404};
    },
    containerRunning: (namespace, name, container) => {
      const uid = podUid(namespace, name);
      if (!uid) return MISSING;
      const why = runtime.notRunning(uid, container);
      return why ? {error: why} : undefined;
    },
    exec: (namespace, name, container, request) => {
      const uid = podUid(namespace, name);
      return uid ? runtime.exec(uid, container, request) : MISSING;
    },
    attach: (namespace, name, container) => {
      const uid = podUid(namespace, name);
      return uid ? runtime.attach(uid, container) : MISSING;
    },
  };
}
