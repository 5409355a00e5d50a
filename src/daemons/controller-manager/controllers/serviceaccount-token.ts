/**
 * The service account token controller (upstream pkg/controller/serviceaccount/tokens_controller.go,
 * with the legacy behavior of before LegacyServiceAccountTokenNoAutoGeneration): each service
 * account gets a Secret of type `orch.io/service-account-token` holding a JWT signed with
 * `--service-account-private-key-file`, its namespace, and `ca.crt` from `--root-ca-file`; the
 * secret is referenced from the account's `secrets`. A token secret whose account is gone is
 * deleted; a token secret deleted is dropped from its account's `secrets` (and so replaced); a
 * token secret created by hand for an account is filled in.
 *
 * Runs only when the key file is set; otherwise start() says so and does nothing.
 */
import { names } from '../../../api/names.js';
import type { KeyObject } from 'node:crypto';
import { keyIdOf, privateKeyFromPem, signingAlgorithm } from '../../shared/serving/jwt-keys.js';
import { readFile } from 'node:fs/promises';
import { SignJWT } from 'jose';
import { ApiStatusError } from '../../../client/errors.js';
import { deletedObject, RateLimitingQueue, type ApiObject, type ResourceRef } from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';

export const serviceAccountTokenType = (): string => names().secretTypes.serviceAccountToken;
export const serviceAccountNameKey = (): string => names().annotations.serviceAccountName;
export const serviceAccountUidKey = (): string => names().annotations.serviceAccountUid;
/** Upstream's LegacyIssuer (`kubernetes/serviceaccount`). */
export const legacyIssuer = (): string => names().legacyTokenIssuer;

const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const tokenSecrets = (): ResourceRef => ({ group: '', version: 'v1', resource: 'secrets', fieldSelector: `type=${serviceAccountTokenType()}` });
/** Upstream retries a key 10 times, then drops it until the next change. */
const MAX_RETRIES = 10;
/** How long a secret we created counts as existing before our informer has seen it (upstream's mutation cache TTL). */
const CREATED_TTL_MS = 60_000;

interface ServiceAccount extends ApiObject {
  secrets?: { name?: string }[];
}

interface Secret extends ApiObject {
  type?: string;
  data?: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// Signing (pure apart from the crypto).

export interface TokenSigner {
  /** The JWS `alg`: RS256 for RSA keys, ES256/ES384/ES512 by curve for EC keys. */
  alg: string;
  /** The `kid` header: base64url SHA-256 of the public key's DER (upstream's keyIDFromPublicKey). */
  kid: string;
  sign(claims: Record<string, unknown>): Promise<string>;
}

/**
 * A signer from a PEM file's text: the first RSA or EC private key in it (PKCS#1, SEC1 or
 * PKCS#8), other blocks (EC PARAMETERS, certificates) skipped, as upstream's ParsePrivateKeyPEM.
 */
export function signerFromPem(pem: string): TokenSigner {
  const key: KeyObject = privateKeyFromPem(pem);
  const algorithm = signingAlgorithm(key) as string;
  const kid = keyIdOf(key);
  return {
    alg: algorithm,
    kid,
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: algorithm, kid }).sign(key),
  };
}

/** Upstream's LegacyClaims: who the token speaks for, no expiry. */
export function legacyClaims(serviceAccount: { namespace: string; name: string; uid: string }, secretName: string): Record<string, string> {
  const prefix = names().annotations.serviceAccountClaimPrefix;
  return {
    iss: legacyIssuer(),
    [`${prefix}namespace`]: serviceAccount.namespace,
    [`${prefix}secret.name`]: secretName,
    [`${prefix}service-account.name`]: serviceAccount.name,
    [`${prefix}service-account.uid`]: serviceAccount.uid,
    sub: `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Pure: which secrets belong to which account, and what a secret lacks.

/** Upstream's IsServiceAccountToken: a token secret naming this account (and its uid, when it names one). */
export function isTokenFor(secret: Secret, sa: ServiceAccount): boolean {
  if (secret.type !== serviceAccountTokenType() || secret.metadata?.namespace !== sa.metadata?.namespace) return false;
  const annotations = secret.metadata?.annotations ?? {};
  if (annotations[serviceAccountNameKey()] !== sa.metadata?.name) return false;
  const uid = annotations[serviceAccountUidKey()];
  return !uid || uid === sa.metadata?.uid;
}

/** What a token secret lacks (upstream's secretUpdateNeeded); `rootCA` is base64. */
export function secretUpdateNeeded(secret: Secret, rootCA: string | undefined): { ca: boolean; namespace: boolean; token: boolean } {
  const data = secret.data ?? {};
  return {
    ca: Boolean(rootCA) && data['ca.crt'] !== rootCA,
    namespace: !data.namespace,
    token: !data.token,
  };
}

/** Upstream's SimpleNameGenerator: 5 characters that cannot spell words. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export function randomSuffix(random: () => number = Math.random): string {
  return Array.from({ length: 5 }, () => NAME_ALPHABET[Math.floor(random() * NAME_ALPHABET.length)]).join('');
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

// ---------------------------------------------------------------------------------------------
// Queue keys: the uid is part of them so a recreated account or secret is a different item.

function saKey(sa: ServiceAccount): string {
  return [sa.metadata?.namespace, sa.metadata?.name, sa.metadata?.uid ?? ''].join('/');
}

function secretKey(secret: Secret): string {
  const annotations = secret.metadata?.annotations ?? {};
  return [secret.metadata?.namespace, secret.metadata?.name, secret.metadata?.uid ?? '', annotations[serviceAccountNameKey()] ?? '', annotations[serviceAccountUidKey()] ?? ''].join('/');
}

function isCode(error: unknown, ...codes: number[]): boolean {
  return error instanceof ApiStatusError && codes.includes(error.code);
}

/** A sync that wants another try later (rate-limited). */
class RetryError extends Error {}

// ---------------------------------------------------------------------------------------------
// The controller.

class TokensController {
  private readonly serviceAccounts;
  private readonly secrets;
  /** Secrets we created that the informer may not have delivered yet (upstream's mutation cache). */
  private readonly created = new Map<string, { secret: Secret; at: number }>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly signer: TokenSigner,
    private readonly rootCA: string | undefined,
  ) {
    this.serviceAccounts = ctx.informers.informerFor<ServiceAccount>(SERVICE_ACCOUNTS);
    this.secrets = ctx.informers.informerFor<Secret>(tokenSecrets());
  }

  get informers() {
    return [this.serviceAccounts, this.secrets];
  }

  private saPath(namespace: string, name = ''): string {
    return `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  private secretPath(namespace: string, name = ''): string {
    return `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /** Token secrets of an account: the informer's, plus ones we created that it has not shown yet. */
  private tokenSecretsOf(sa: ServiceAccount): Secret[] {
    const namespace = sa.metadata?.namespace ?? '';
    const cached = this.secrets.indexer.byIndex('namespace', namespace);
    const now = this.ctx.now();
    for (const [key, entry] of this.created) {
      if (this.secrets.indexer.getByKey(key) || now - entry.at > CREATED_TTL_MS) this.created.delete(key);
      else cached.push(entry.secret);
    }
    return cached.filter((s) => isTokenFor(s, sa));
  }

  /** An account's sync: tokens of a deleted account go; a live one gets a referenced token. */
  async syncServiceAccount(key: string): Promise<void> {
    const [namespace, name, uid] = key.split('/');
    const sa = this.serviceAccounts.indexer.getByKey(`${namespace}/${name}`);
    if (!sa || (uid && sa.metadata?.uid !== uid)) {
      await this.deleteTokens({ metadata: { namespace, name, uid } });
      return;
    }
    await this.ensureReferencedToken(sa);
  }

  private async deleteTokens(sa: ServiceAccount): Promise<void> {
    for (const secret of this.tokenSecretsOf(sa)) await this.deleteSecret(secret.metadata!.namespace!, secret.metadata!.name!, secret.metadata?.uid);
  }

  /** Deletes a secret, only if it is still the one we looked at (uid precondition). */
  private async deleteSecret(namespace: string, name: string, uid: string | undefined): Promise<void> {
    try {
      await this.ctx.client.request({
        method: 'DELETE',
        path: this.secretPath(namespace, name),
        body: { kind: 'DeleteOptions', apiVersion: 'v1', ...(uid ? { preconditions: { uid } } : {}) },
      });
    } catch (error) {
      if (!isCode(error, 404, 409)) throw error;
    }
  }

  private async ensureReferencedToken(sa: ServiceAccount): Promise<void> {
    const referenced = new Set((sa.secrets ?? []).map((s) => s.name));
    if (this.tokenSecretsOf(sa).some((s) => referenced.has(s.metadata?.name))) return;

    const namespace = sa.metadata!.namespace!;
    const name = sa.metadata!.name!;
    const uid = sa.metadata!.uid ?? '';
    // Our cache of the account may be stale (the reference may already be there): check the live one.
    let live: ServiceAccount;
    try {
      live = await this.ctx.client.get<ServiceAccount>(this.saPath(namespace, name));
    } catch (error) {
      if (isCode(error, 404)) return;
      throw error;
    }
    if (live.metadata?.uid !== uid) return;
    if (live.metadata?.resourceVersion !== sa.metadata?.resourceVersion) throw new RetryError(`service account ${namespace}/${name} is not up to date in the cache`);

    const secretName = `${name}-token-${randomSuffix()}`;
    const data: Record<string, string> = {
      token: b64(await this.signer.sign(legacyClaims({ namespace, name, uid }, secretName))),
      namespace: b64(namespace),
    };
    if (this.rootCA) data['ca.crt'] = this.rootCA;
    const created = (await this.ctx.client.request<Secret>({
      method: 'POST',
      path: this.secretPath(namespace),
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secretName, namespace, annotations: { [serviceAccountNameKey()]: name, [serviceAccountUidKey()]: uid } },
        type: serviceAccountTokenType(),
        data,
      },
    })).body;
    this.created.set(`${namespace}/${secretName}`, { secret: created, at: this.ctx.now() });

    // Reference it from the account, re-reading the account on conflicts; give the secret up if we cannot.
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        if (attempt > 0) live = await this.ctx.client.get<ServiceAccount>(this.saPath(namespace, name));
        if (live.metadata?.uid !== uid) break;
        const updated = { ...live, secrets: [...(live.secrets ?? []), { name: secretName }] };
        await this.ctx.client.request({ method: 'PUT', path: this.saPath(namespace, name), body: updated });
        this.ctx.logger.v(2).info('Created service account token', 'serviceAccount', `${namespace}/${name}`, 'secret', secretName);
        return;
      } catch (error) {
        lastError = error;
        if (!isCode(error, 409)) break;
      }
    }
    this.ctx.logger.v(2).info('Deleting secret because a reference could not be added', 'secret', `${namespace}/${secretName}`, 'err', String(lastError ?? 'account gone'));
    this.created.delete(`${namespace}/${secretName}`);
    await this.deleteSecret(namespace, secretName, created.metadata?.uid).catch((error) => this.ctx.logger.error('Deleting secret failed', 'err', String(error)));
    if (lastError && !isCode(lastError, 404)) throw lastError;
  }

  /** A token secret's sync: drop the reference of a deleted one, delete an orphan, fill in a partial one. */
  async syncSecret(key: string): Promise<void> {
    const [namespace, name, uid, saName, saUID] = key.split('/');
    const secret = this.secrets.indexer.getByKey(`${namespace}/${name}`);
    if (!secret || (uid && secret.metadata?.uid !== uid)) {
      if (saName) await this.removeSecretReference(namespace, saName, saUID, name);
      return;
    }
    let sa = this.serviceAccounts.indexer.getByKey(`${namespace}/${saName}`);
    if (!sa) {
      // The cache may not have it yet: ask the server before deleting anything.
      sa = await this.ctx.client.get<ServiceAccount>(this.saPath(namespace, saName)).catch((error: unknown) => {
        if (isCode(error, 404)) return undefined;
        throw error;
      });
    }
    if (!sa || (saUID && sa.metadata?.uid !== saUID)) {
      this.ctx.logger.v(2).info('Deleting token secret of a service account that is gone', 'secret', `${namespace}/${name}`);
      await this.deleteSecret(namespace, name, secret.metadata?.uid);
      return;
    }
    await this.generateTokenIfNeeded(sa, secret);
  }

  private async removeSecretReference(namespace: string, saName: string, saUID: string, secretName: string): Promise<void> {
    let sa: ServiceAccount;
    try {
      sa = await this.ctx.client.get<ServiceAccount>(this.saPath(namespace, saName));
    } catch (error) {
      if (isCode(error, 404)) return;
      throw error;
    }
    if (saUID && sa.metadata?.uid !== saUID) return;
    if (!(sa.secrets ?? []).some((s) => s.name === secretName)) return;
    try {
      await this.ctx.client.request({ method: 'PUT', path: this.saPath(namespace, saName), body: { ...sa, secrets: (sa.secrets ?? []).filter((s) => s.name !== secretName) } });
    } catch (error) {
      if (!isCode(error, 404)) throw error;
    }
  }

  private async generateTokenIfNeeded(sa: ServiceAccount, cached: Secret): Promise<void> {
    const needed = secretUpdateNeeded(cached, this.rootCA);
    if (!needed.ca && !needed.namespace && !needed.token) return;
    const namespace = cached.metadata!.namespace!;
    const name = cached.metadata!.name!;
    let live: Secret;
    try {
      live = await this.ctx.client.get<Secret>(this.secretPath(namespace, name));
    } catch (error) {
      if (isCode(error, 404)) return;
      throw error;
    }
    // A stale cache: the update event on its way brings us back here.
    if (live.metadata?.resourceVersion !== cached.metadata?.resourceVersion) return;
    const now = secretUpdateNeeded(live, this.rootCA);
    const data = { ...live.data };
    if (now.ca && this.rootCA) data['ca.crt'] = this.rootCA;
    if (now.namespace) data.namespace = b64(namespace);
    if (now.token) {
      const claims = legacyClaims({ namespace, name: sa.metadata!.name!, uid: sa.metadata!.uid ?? '' }, name);
      data.token = b64(await this.signer.sign(claims));
    }
    const annotations = { ...live.metadata?.annotations, [serviceAccountNameKey()]: sa.metadata!.name!, [serviceAccountUidKey()]: sa.metadata!.uid ?? '' };
    try {
      await this.ctx.client.request({ method: 'PUT', path: this.secretPath(namespace, name), body: { ...live, metadata: { ...live.metadata, annotations }, data } });
    } catch (error) {
      // Someone else changed it (we will hear of it) or it is gone: nothing to do now.
      if (!isCode(error, 404, 409)) throw error;
    }
  }
}

/** A worker loop over one queue, with upstream's retry limit. */
async function work(queue: RateLimitingQueue<string>, sync: (key: string) => Promise<void>, ctx: ControllerContext): Promise<void> {
  for (;;) {
    const key = await queue.get();
    if (key === undefined) return;
    try {
      await sync(key);
      queue.forget(key);
    } catch (error) {
      if (queue.numRequeues(key) < MAX_RETRIES) queue.addRateLimited(key);
      else queue.forget(key);
      if (!(error instanceof RetryError)) ctx.logger.error('Syncing service account tokens failed', 'queue', queue.name, 'key', key, 'err', String(error));
    } finally {
      queue.done(key);
    }
  }
}

async function start(ctx: ControllerContext, signal: AbortSignal): Promise<RunningController> {
  const keyFile = ctx.options['service-account-private-key-file'];
  if (typeof keyFile !== 'string' || keyFile === '' || keyFile === 'none') {
    ctx.logger.info('"serviceaccount-token" is disabled because there is no private key (--service-account-private-key-file)');
    return { done: Promise.resolve(), snapshot: () => ({ name: 'serviceaccount-token', workers: 0, queueDepth: 0, details: { state: 'disabled' } }) };
  }
  let signer: TokenSigner;
  try {
    signer = signerFromPem(await readFile(keyFile, 'utf8'));
  } catch (error) {
    throw new Error(`error reading key for service account token controller: ${error instanceof Error ? error.message : String(error)}`);
  }
  const caFile = ctx.options['root-ca-file'];
  const rootCA = typeof caFile === 'string' && caFile !== '' && caFile !== 'none' ? (await readFile(caFile)).toString('base64') : undefined;

  const value = ctx.options['concurrent-serviceaccount-token-syncs'];
  const workers = Math.max(1, typeof value === 'number' ? value : 5);
  const controller = new TokensController(ctx, signer, rootCA);
  const saQueue = new RateLimitingQueue<string>({ name: 'serviceaccount_tokens_service', metrics: ctx.metrics });
  const secretQueue = new RateLimitingQueue<string>({ name: 'serviceaccount_tokens_secret', metrics: ctx.metrics });
  const [serviceAccounts, secrets] = controller.informers;
  const registrations = [
    serviceAccounts.addEventHandler({
      onAdd: (sa) => saQueue.add(saKey(sa)),
      onUpdate: (_, sa) => saQueue.add(saKey(sa)),
      onDelete: (sa) => saQueue.add(saKey(deletedObject(sa))),
    }),
    secrets.addEventHandler({
      onAdd: (s) => secretQueue.add(secretKey(s)),
      onUpdate: (_, s) => secretQueue.add(secretKey(s)),
      onDelete: (s) => secretQueue.add(secretKey(deletedObject(s))),
    }),
  ];

  const done = (async () => {
    ctx.informers.start();
    const synced = await Promise.all(controller.informers.map((i) => i.waitForSync({ signal })));
    const running = !signal.aborted && synced.every(Boolean)
      ? Array.from({ length: workers }, () => [work(saQueue, (k) => controller.syncServiceAccount(k), ctx), work(secretQueue, (k) => controller.syncSecret(k), ctx)]).flat()
      : [];
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    for (const registration of registrations) registration.remove();
    await Promise.all([saQueue.shutDownWithDrain(), secretQueue.shutDownWithDrain()]);
    await Promise.all(running);
  })();

  return {
    done,
    snapshot: () => ({
      name: 'serviceaccount-token',
      workers,
      queueDepth: saQueue.len() + secretQueue.len(),
      details: { serviceAccountQueue: saQueue.len(), secretQueue: secretQueue.len() },
    }),
  };
}

export const serviceAccountTokenController: ControllerDescriptor = {
  name: 'serviceaccount-token',
  enabledByDefault: true,
  start,
};

export default serviceAccountTokenController;
