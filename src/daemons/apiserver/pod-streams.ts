/**
 * pods/exec, pods/attach and pods/portforward: the streaming subresources kubectl exec, attach,
 * cp and port-forward use. orch's agent runs containers as local processes and has no streaming
 * server yet, so these answer 405 with a Status that says so and what to do instead, rather than
 * the bare 404 a user cannot act on.
 */
import {failureStatus, type StatusObject} from './filters/status.js';

export const POD_STREAM_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach|portforward)$/;

export function podStreamUnsupported(name: string, subresource: string): StatusObject {
  return failureStatus(
    405,
    'MethodNotAllowed',
    `pods/${subresource} is not supported by orch yet: containers run as processes of the agent on the pod's node; ` +
      `the process id is in the pod's status.containerStatuses[].containerID (process://<pid>), and its output in kubectl logs`,
    {name, kind: 'pods'},
  );
}
