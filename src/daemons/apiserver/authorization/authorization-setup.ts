/**
 * Builds the authorizers that need files or a client before the chain can be made: the ABAC policy
 * of `--authorization-policy-file` and the Webhook authorizer of
 * `--authorization-webhook-config-file`. The I/O edge of authorization: the decisions themselves
 * are in abac.ts and webhook-authorizer.ts.
 */
import {readFile} from 'node:fs/promises';
import {AbacAuthorizer, parseAbacPolicyFile} from './abac.js';
import {WebhookAuthorizer, type SubjectAccessReviewVersion} from '../../shared/authorization/webhook-authorizer.js';
import {type AuthorizerDependencies} from './authorizer.js';
import {alwaysAllow, alwaysDeny} from '../../shared/authorization/union.js';
import {ConfigFileReloader} from '../../shared/config-file-reloader.js';
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from '../../shared/authorization/attributes.js';
import {compileMatchConditions, parseAuthorizationConfig, type ConfiguredAuthorizer} from './authorization-config.js';
import {RbacAuthorizer, type RbacPolicySource} from './rbac.js';
import {NodeAuthorizer} from './node-authorizer.js';
import type {NodeGraph} from './node-graph.js';
import {nodePolicyRules} from './bootstrap-policy.js';
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

export interface ConfiguredChainDependencies {
  rbac?: RbacPolicySource;
  nodeGraph?: NodeGraph;
}

/** The authorizers of a structured configuration, in its order (the privileged group comes first in the chain). */
export async function authorizersFromConfig(configured: readonly ConfiguredAuthorizer[], dependencies: ConfiguredChainDependencies): Promise<Authorizer[]> {
  const chain: Authorizer[] = [];
  for (const entry of configured) {
    if (entry.type === 'AlwaysAllow') chain.push(alwaysAllow);
    else if (entry.type === 'AlwaysDeny') chain.push(alwaysDeny);
    else if (entry.type === 'RBAC') {
      if (!dependencies.rbac) throw new Error('the RBAC authorizer needs the RBAC objects');
      chain.push(new RbacAuthorizer(dependencies.rbac));
    } else if (entry.type === 'Node') {
      if (!dependencies.nodeGraph) throw new Error('the Node authorizer needs the node graph');
      chain.push(new NodeAuthorizer(dependencies.nodeGraph, nodePolicyRules));
    } else if (entry.webhook) {
      const w = entry.webhook;
      let client: RestClient;
      try {
        const config = await resolveClientConfig({orchconfig: w.kubeConfigFile});
        client = new RestClient({config, timeoutMs: w.timeoutMs, maxRetries: 0, userAgent: `orch-apiserver/authorization-webhook/${entry.name}`});
      } catch (error) {
        throw new Error(`authorizer ${JSON.stringify(entry.name)}: ${w.kubeConfigFile}: ${(error as Error).message}`);
      }
      chain.push(
        new WebhookAuthorizer({
          version: w.subjectAccessReviewVersion,
          authorizedTtlMs: w.authorizedTtlMs,
          unauthorizedTtlMs: w.unauthorizedTtlMs,
          cacheAuthorized: w.cacheAuthorizedRequests,
          cacheUnauthorized: w.cacheUnauthorizedRequests,
          failurePolicy: w.failurePolicy,
          matches: compileMatchConditions(w.matchConditions),
          post: async (review) => (await client.request({method: 'POST', path: '', body: review})).body,
        }),
      );
    }
  }
  return chain;
}

/**
 * `--authorization-config` with its automatic reload: the file is read again when it changes (a
 * cheap stat every `intervalMs`); a valid new configuration replaces the chain at once, an invalid
 * one is logged and the running chain kept, as upstream.
 */
export class ReloadingAuthorizer implements Authorizer {
  private chain: Authorizer;
  /** Reads the file again when it changes (`watch`, `stop`, `reload`). */
  readonly reloader: ConfigFileReloader<{chain: Authorizer; types: string[]}>;
  /** The types of the running configuration, in order (what SelfSubjectRulesReview asks). */
  types: string[] = [];

  private constructor(file: string, text: string, chain: Authorizer, build: (configured: ConfiguredAuthorizer[]) => Promise<Authorizer>, log: (message: string) => void) {
    this.chain = chain;
    this.reloader = new ConfigFileReloader(
      file, text, 'authorization config',
      async (t) => {
        const configured = parseAuthorizationConfig(t, file);
        return {chain: await build(configured), types: configured.map((a): string => a.type)};
      },
      (next) => {
        this.chain = next.chain;
        this.types = next.types;
      },
      log,
    );
  }

  static async load(file: string, build: (configured: ConfiguredAuthorizer[]) => Promise<Authorizer>, log: (message: string) => void): Promise<ReloadingAuthorizer> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new Error(`--authorization-config: cannot read ${file}: ${(error as Error).message}`);
    }
    const configured = parseAuthorizationConfig(text, file);
    const reloading = new ReloadingAuthorizer(file, text, await build(configured), build, log);
    reloading.types = configured.map((a) => a.type);
    return reloading;
  }

  authorize(attributes: AuthorizationAttributes): AuthorizationResult | Promise<AuthorizationResult> {
    return this.chain.authorize(attributes);
  }

}
