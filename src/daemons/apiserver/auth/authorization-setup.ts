/**
 * Builds the authorizers that need files or a client before the chain can be made: the ABAC policy
 * of `--authorization-policy-file` and the Webhook authorizer of
 * `--authorization-webhook-config-file`. The I/O edge of authorization: the decisions themselves
 * are in abac.ts and webhook-authorizer.ts.
 */
import {readFile} from 'node:fs/promises';
import {AbacAuthorizer, parseAbacPolicyFile} from './abac.js';
import {WebhookAuthorizer, type SubjectAccessReviewVersion} from './webhook-authorizer.js';
import type {AuthorizerDependencies} from './authorizer.js';
import {resolveClientConfig} from '../../../client/orchconfig.js';
import {RestClient} from '../../../client/rest-client.js';

export interface AuthorizationFiles {
  modes: string[];
  policyFile?: string;
  webhookConfigFile?: string;
  webhookVersion: string;
  webhookAuthorizedTtlMs: number;
  webhookUnauthorizedTtlMs: number;
}

export const SUBJECT_ACCESS_REVIEW_VERSIONS: readonly SubjectAccessReviewVersion[] = ['v1', 'v1beta1'];

/** Upstream's webhook client timeout. */
const WEBHOOK_TIMEOUT_MS = 30_000;

export async function loadAuthorizers(o: AuthorizationFiles, warn: (message: string) => void): Promise<Omit<AuthorizerDependencies, 'rbac'>> {
  const dependencies: Omit<AuthorizerDependencies, 'rbac'> = {};
  if (o.modes.includes('ABAC') && o.policyFile) {
    let text: string;
    try {
      text = await readFile(o.policyFile, 'utf8');
    } catch (error) {
      throw new Error(`--authorization-policy-file: cannot read ${o.policyFile}: ${(error as Error).message}`);
    }
    const parsed = parseAbacPolicyFile(text, o.policyFile);
    for (const warning of parsed.warnings) warn(warning);
    dependencies.abac = new AbacAuthorizer(parsed.policies);
  }
  if (o.modes.includes('Webhook') && o.webhookConfigFile) {
    if (!(SUBJECT_ACCESS_REVIEW_VERSIONS as readonly string[]).includes(o.webhookVersion)) {
      throw new Error(`--authorization-webhook-version: invalid value "${o.webhookVersion}": accepted values are ${SUBJECT_ACCESS_REVIEW_VERSIONS.join(', ')}`);
    }
    let client: RestClient;
    try {
      const config = await resolveClientConfig({orchconfig: o.webhookConfigFile});
      client = new RestClient({config, timeoutMs: WEBHOOK_TIMEOUT_MS, maxRetries: 0, userAgent: 'orch-apiserver/authorization-webhook'});
    } catch (error) {
      throw new Error(`--authorization-webhook-config-file ${o.webhookConfigFile}: ${(error as Error).message}`);
    }
    dependencies.webhook = new WebhookAuthorizer({
      version: o.webhookVersion as SubjectAccessReviewVersion,
      authorizedTtlMs: o.webhookAuthorizedTtlMs,
      unauthorizedTtlMs: o.webhookUnauthorizedTtlMs,
      post: async (review) => (await client.request({method: 'POST', path: '', body: review})).body,
    });
  }
  return dependencies;
}
