/**
 * The `authorizer` variable of admission CEL (upstream's k8s.io/apiserver/pkg/cel/library/authz.go):
 * `authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('delete')`
 * asks the server's authorizer as the request's user and answers a Decision (`allowed()`,
 * `reason()`, `errored()`, `error()`); `authorizer.path('/healthz').check('get')` for non-resource
 * paths; `authorizer.serviceAccount(ns, name)` asks as that service account;
 * `authorizer.requestResource` is the request's own resource. Checks are asynchronous (the
 * authorizer may be a webhook), which the CEL library awaits.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { SERVICE_ACCOUNT_PREFIX, SERVICE_ACCOUNTS_GROUP } from '../../daemons/shared/authentication/user.js';

export interface CelAuthorizationRequest {
  user?: { name: string; groups: string[]; uid?: string; extra?: Record<string, string[]> };
  verb: string;
  resourceRequest: boolean;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path?: string;
}

export type CelAuthorize = (request: CelAuthorizationRequest) => Promise<{ allowed: boolean; reason?: string; error?: string }>;

export class CelAuthorizer {
  readonly requestResource: CelResourceCheck;
  constructor(
    readonly authorize: CelAuthorize,
    readonly user: CelAuthorizationRequest['user'] | undefined,
    request: { group: string; resource: string; subresource: string; namespace: string; name: string },
  ) {
    this.requestResource = new CelResourceCheck(this, request.group, request.resource, request.subresource, request.namespace, request.name);
  }
}

export class CelPathCheck {
  constructor(readonly authorizer: CelAuthorizer, readonly path: string) {}
}

export class CelGroupCheck {
  constructor(readonly authorizer: CelAuthorizer, readonly group: string) {}
}

export class CelResourceCheck {
  constructor(
    readonly authorizer: CelAuthorizer,
    readonly group: string,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
  ) {}

  with(changes: Partial<Pick<CelResourceCheck, 'subresource' | 'namespace' | 'name'>>): CelResourceCheck {
    const next = { subresource: this.subresource, namespace: this.namespace, name: this.name, ...changes };
    return new CelResourceCheck(this.authorizer, this.group, this.resource, next.subresource, next.namespace, next.name);
  }
}

export class CelDecision {
  constructor(readonly allowedValue: boolean, readonly reasonValue: string, readonly errorValue: string) {}
}

async function decide(authorizer: CelAuthorizer, request: CelAuthorizationRequest): Promise<CelDecision> {
  try {
    const result = await authorizer.authorize({ ...request, user: authorizer.user });
    return new CelDecision(result.allowed, result.reason ?? '', result.error ?? '');
  } catch (error) {
    return new CelDecision(false, '', (error as Error).message ?? String(error));
  }
}

/** Declares the Authorizer types and functions on an environment. */
export function addAuthorizerLibrary(env: Environment): Environment {
  return env
    .registerType('kubernetes.authorization.Authorizer', { ctor: CelAuthorizer, fields: { requestResource: 'kubernetes.authorization.ResourceCheck' } })
    .registerType('kubernetes.authorization.PathCheck', { ctor: CelPathCheck, fields: {} })
    .registerType('kubernetes.authorization.GroupCheck', { ctor: CelGroupCheck, fields: {} })
    .registerType('kubernetes.authorization.ResourceCheck', { ctor: CelResourceCheck, fields: {} })
    .registerType('kubernetes.authorization.Decision', { ctor: CelDecision, fields: {} })
    .registerFunction('kubernetes.authorization.Authorizer.path(string): kubernetes.authorization.PathCheck', (a: CelAuthorizer, path: string) => new CelPathCheck(a, path))
    .registerFunction('kubernetes.authorization.Authorizer.group(string): kubernetes.authorization.GroupCheck', (a: CelAuthorizer, group: string) => new CelGroupCheck(a, group))
    .registerFunction(
      'kubernetes.authorization.Authorizer.serviceAccount(string, string): kubernetes.authorization.Authorizer',
      (a: CelAuthorizer, namespace: string, name: string) => {
        const user = { name: `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`, groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`] };
        const r = a.requestResource;
        return new CelAuthorizer(a.authorize, user, { group: r.group, resource: r.resource, subresource: r.subresource, namespace: r.namespace, name: r.name });
      },
    )
    .registerFunction('kubernetes.authorization.GroupCheck.resource(string): kubernetes.authorization.ResourceCheck', (g: CelGroupCheck, resource: string) => new CelResourceCheck(g.authorizer, g.group, resource))
    .registerFunction('kubernetes.authorization.ResourceCheck.subresource(string): kubernetes.authorization.ResourceCheck', (r: CelResourceCheck, subresource: string) => r.with({ subresource }))
    .registerFunction('kubernetes.authorization.ResourceCheck.namespace(string): kubernetes.authorization.ResourceCheck', (r: CelResourceCheck, namespace: string) => r.with({ namespace }))
    .registerFunction('kubernetes.authorization.ResourceCheck.name(string): kubernetes.authorization.ResourceCheck', (r: CelResourceCheck, name: string) => r.with({ name }))
    .registerFunction('kubernetes.authorization.ResourceCheck.check(string): kubernetes.authorization.Decision', (r: CelResourceCheck, verb: string) =>
      decide(r.authorizer, {
        verb, resourceRequest: true, apiGroup: r.group, resource: r.resource, subresource: r.subresource, namespace: r.namespace, name: r.name,
      }))
    .registerFunction('kubernetes.authorization.PathCheck.check(string): kubernetes.authorization.Decision', (p: CelPathCheck, verb: string) =>
      decide(p.authorizer, { verb: verb.toLowerCase(), resourceRequest: false, path: p.path }))
    .registerFunction('kubernetes.authorization.Decision.allowed(): bool', (d: CelDecision) => d.allowedValue)
    .registerFunction('kubernetes.authorization.Decision.reason(): string', (d: CelDecision) => d.reasonValue)
    .registerFunction('kubernetes.authorization.Decision.errored(): bool', (d: CelDecision) => d.errorValue !== '')
    .registerFunction('kubernetes.authorization.Decision.error(): string', (d: CelDecision) => d.errorValue);
}
