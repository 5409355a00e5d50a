/**
 * The Node authorizer of `--authorization-mode=Node`, as upstream's
 * (plugin/pkg/auth/authorizer/node/node_authorizer.go): requests of a node's agent (user
 * `system:node:<name>` in group `system:nodes`) to read secrets, config maps, volume claims,
 * volumes, resource claims and volume attachments, and to create service account tokens, are
 * allowed only for objects the node reaches through the pods bound to it (NodeGraph); its lease
 * and CSINode only under its own name; everything else by the rules of the `system:node` role. Other
 * users get no opinion. Pairs with the NodeRestriction admission plugin, which limits what a node
 * may write to its own objects. Pure, given the graph.
 */
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from '../../shared/authorization/attributes.js';
import type {PolicyRule} from './rbac-types.js';
import {ruleAllows} from './rbac.js';
import type {NodeGraph, VertexType} from './node-graph.js';
import type {UserInfo} from '../../shared/authentication/user.js';
import {names} from '../../../api/names.js';

const noOpinion = (reason = ''): AuthorizationResult => ({decision: 'NoOpinion', reason});
const allow: AuthorizationResult = {decision: 'Allow', reason: ''};

/** The node a user is, as upstream's default NodeIdentifier: `system:node:<name>` in `system:nodes`. */
export function nodeIdentity(user: UserInfo): {isNode: boolean; nodeName: string} {
  const {users} = names();
  if (!user.groups.includes(users.nodesGroup) || !user.name.startsWith(users.nodePrefix)) return {isNode: false, nodeName: ''};
  return {isNode: true, nodeName: user.name.slice(users.nodePrefix.length)};
}

export class NodeAuthorizer implements Authorizer {
  constructor(
    private readonly graph: NodeGraph,
    /** The rules of the `system:node` role, for the resources the graph does not subdivide. */
    private readonly nodeRules: () => readonly PolicyRule[],
  ) {}

  authorize(a: AuthorizationAttributes): AuthorizationResult {
    const {isNode, nodeName} = nodeIdentity(a.user);
    if (!isNode) return noOpinion();
    if (!nodeName) return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);
    if (a.resourceRequest) {
      const n = names();
      const resource = `${a.apiGroup ?? ''}/${a.resource ?? ''}`;
      switch (resource) {
        case '/secrets':
          return this.readNamespaced(nodeName, 'secret', a);
        case '/configmaps':
          return this.readNamespaced(nodeName, 'configmap', a);
        case '/persistentvolumeclaims':
          return a.subresource === 'status' ? this.statusUpdate(nodeName, 'pvc', a) : this.get(nodeName, 'pvc', a);
        case '/persistentvolumes':
          return this.get(nodeName, 'pv', a);
        case `${n.groups.resource}/resourceclaims`:
          return this.get(nodeName, 'resourceclaim', a);
        case `${n.groups.storage}/volumeattachments`:
          return this.get(nodeName, 'volumeattachment', a);
        case '/serviceaccounts':
          return this.createToken(nodeName, a);
        case `${n.groups.coordination}/leases`:
          return this.lease(nodeName, a);
        case `${n.groups.storage}/csinodes`:
          return this.csiNode(nodeName, a);
      }
    }
    return this.nodeRules().some((rule) => ruleAllows(a, rule)) ? allow : noOpinion();
  }

  private path(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (!a.name) return noOpinion('No Object name found');
    const namespace = type === 'pv' || type === 'volumeattachment' ? '' : a.namespace ?? '';
    return this.graph.hasPath(nodeName, type, namespace, a.name) ? allow : noOpinion(`no relationship found between node '${nodeName}' and this object`);
  }

  private readNamespaced(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (!['get', 'list', 'watch'].includes(a.verb)) return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return this.path(nodeName, type, a);
  }

  private get(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return this.path(nodeName, type, a);
  }

  private statusUpdate(nodeName: string, type: VertexType, a: AuthorizationAttributes): AuthorizationResult {
    if (!['update', 'patch', 'get'].includes(a.verb)) return noOpinion('can only get/update/patch this type');
    if (a.subresource !== 'status') return noOpinion('can only update status subresource');
    return this.path(nodeName, type, a);
  }

  private createToken(nodeName: string, a: AuthorizationAttributes): AuthorizationResult {
    if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return this.path(nodeName, 'serviceaccount', a);
  }

  private lease(nodeName: string, a: AuthorizationAttributes): AuthorizationResult {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    const leaseNamespace = names().namespaces.nodeLease;
    if (a.namespace !== leaseNamespace) return noOpinion(`can only access leases in the ${JSON.stringify(leaseNamespace)} system namespace`);
    // The name of a create is not known here; the NodeRestriction admission plugin checks it.
    if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access node lease with the same name as the requesting node');
    return allow;
  }

  private csiNode(nodeName: string, a: AuthorizationAttributes): AuthorizationResult {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
    if (a.subresource) return noOpinion('cannot authorize CSINode subresources');
    if (a.verb !== 'create' && a.name !== nodeName) return noOpinion('can only access CSINode with the same name as the requesting node');
    return allow;
  }
}
