/**
 * Bootstrap tokens (`--enable-bootstrap-token-auth`; upstream's plugin/pkg/auth/authenticator/token/
 * bootstrap): a token `<id>.<secret>` names the secret `bootstrap-token-<id>` of the system
 * namespace, of the bootstrap token type, whose `token-secret` matches (compared in constant time),
 * not expired (`expiration`, RFC 3339), with `usage-bootstrap-authentication: "true"`. The user is
 * `system:bootstrap:<id>` in `system:bootstrappers` and the secret's `auth-extra-groups`. As
 * upstream, a token that does not match any of this is simply not this authenticator's (the request
 * ends as any unknown token: 401), and why is logged without the secret.
 */
import {timingSafeEqual} from 'node:crypto';
import {names} from '../../../api/names.js';
import type {JsonObject} from '../../../patch/types.js';
import type {ObjectGetter} from './serviceaccount/authenticator.js';
import type {TokenAuthenticator, TokenResult} from '../../shared/authentication/token-authenticator.js';
import type {UserInfo} from '../../shared/authentication/user.js';

export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** The token's id and secret, or undefined when it is not shaped like a bootstrap token. */
export function parseBootstrapToken(token: string): {id: string; secret: string} | undefined {
  const match = TOKEN.exec(token);
  return match ? {id: match[1], secret: match[2]} : undefined;
}

const field = (data: Record<string, string>, key: string): string => (data[key] !== undefined ? Buffer.from(data[key], 'base64').toString('utf8') : '');

/** The user of a bootstrap token secret for this token, or why there is none. Pure. */
export function bootstrapUser(secret: JsonObject, token: {id: string; secret: string}, now: Date): {user: UserInfo} | {reason: string} {
  const meta = (secret.metadata ?? {}) as {deletionTimestamp?: string};
  if (meta.deletionTimestamp) return {reason: 'the secret is being deleted'};
  if (secret.type !== names().secretTypes.bootstrapToken) return {reason: `the secret is not of type ${names().secretTypes.bootstrapToken}`};
  const data = (secret.data ?? {}) as Record<string, string>;
  const stored = Buffer.from(field(data, 'token-secret'));
  const given = Buffer.from(token.secret);
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return {reason: 'the token-secret does not match'};
  if (field(data, 'token-id') !== token.id) return {reason: 'the token-id does not match'};
  const expiration = field(data, 'expiration');
  if (expiration) {
    const at = Date.parse(expiration);
    if (Number.isNaN(at)) return {reason: 'the expiration is not an RFC 3339 time'};
    if (at <= now.getTime()) return {reason: 'the token has expired'};
  }
  if (field(data, 'usage-bootstrap-authentication') !== 'true') return {reason: 'the token is not marked for authentication (usage-bootstrap-authentication)'};
  const groups = [BOOTSTRAPPERS_GROUP];
  for (const group of field(data, 'auth-extra-groups').split(',').map((g) => g.trim()).filter(Boolean)) {
    if (!EXTRA_GROUP.test(group)) return {reason: `auth-extra-groups: ${JSON.stringify(group)} does not match ${EXTRA_GROUP.source}`};
    if (!groups.includes(group)) groups.push(group);
  }
  return {user: {name: `${BOOTSTRAP_USER_PREFIX}${token.id}`, groups}};
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  constructor(
    private readonly getObject: ObjectGetter,
    private readonly now: () => Date = () => new Date(),
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  async authenticateToken(token: string): Promise<TokenResult | undefined> {
    const parsed = parseBootstrapToken(token);
    if (!parsed) return undefined;
    const name = `bootstrap-token-${parsed.id}`;
    const secret = await this.getObject('secrets', names().namespaces.system, name);
    if (!secret) {
      this.log(`No secret of name ${name} to match bootstrap bearer token`);
      return undefined;
    }
    const result = bootstrapUser(secret, parsed, this.now());
    if ('reason' in result) {
      this.log(`Bootstrap secret ${names().namespaces.system}/${name}: ${result.reason}`);
      return undefined;
    }
    return {user: result.user, audiences: []};
  }
}
