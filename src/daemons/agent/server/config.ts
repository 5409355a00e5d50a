/**
 * The servers' configuration from the agent's typed options (src/daemons/agent/config's `options`,
 * keyed by option name), and the start checks of what is not built yet.
 */
import type {TlsVersionName} from '../../../options/value-tls.js';
import type {AgentServerConfig} from './types.js';

function optional<T>(value: unknown): T | undefined {
  return value === undefined || value === null || value === '' ? undefined : (value as T);
}

const FOUR_HOURS_MS = 4 * 60 * 60 * 1000;

/** The option's table says it: 0 means no idle limit, and 4h caps it regardless. */
function idleTimeoutMs(ms: number | undefined): number {
  return ms === undefined || ms <= 0 ? FOUR_HOURS_MS : Math.min(ms, FOUR_HOURS_MS);
}

export function serverConfigFromOptions(options: Record<string, unknown>): AgentServerConfig {
  const cipherSuites = optional<string[]>(options['tls-cipher-suites']);
  return {
    address: optional<string>(options['address']) ?? '0.0.0.0',
    port: optional<number>(options['port']) ?? 10250,
    readOnlyPort: optional<number>(options['read-only-port']) ?? 10255,
    healthzBindAddress: optional<string>(options['healthz-bind-address']) ?? '127.0.0.1',
    healthzPort: optional<number>(options['healthz-port']) ?? 10248,
    enableServer: optional<boolean>(options['enable-server']) ?? true,
    enableDebuggingHandlers: optional<boolean>(options['enable-debugging-handlers']) ?? true,
    tlsCertFile: optional<string>(options['tls-cert-file']),
    tlsPrivateKeyFile: optional<string>(options['tls-private-key-file']),
    certDir: optional<string>(options['cert-dir']) ?? '/var/lib/agent/pki',
    tlsMinVersion: optional<TlsVersionName>(options['tls-min-version']),
    tlsCipherSuites: cipherSuites && cipherSuites.length > 0 ? cipherSuites : undefined,
    anonymousAuth: optional<boolean>(options['anonymous-auth']) ?? true,
    clientCaFile: optional<string>(options['client-ca-file']),
    authenticationTokenWebhook: optional<boolean>(options['authentication-token-webhook']) ?? false,
    authorizationMode: optional<string>(options['authorization-mode']) ?? 'AlwaysAllow',
    authenticationTokenWebhookCacheTtlMs: optional<{ms: number}>(options['authentication-token-webhook-cache-ttl'])?.ms ?? 120_000,
    authorizationWebhookAuthorizedTtlMs: optional<{ms: number}>(options['authorization-webhook-cache-authorized-ttl'])?.ms ?? 300_000,
    authorizationWebhookUnauthorizedTtlMs: optional<{ms: number}>(options['authorization-webhook-cache-unauthorized-ttl'])?.ms ?? 30_000,
    streamingConnectionIdleTimeoutMs: idleTimeoutMs(optional<{ms: number}>(options['streaming-connection-idle-timeout'])?.ms),
  };
}

/**
 * Settings the servers cannot start with, each line naming the option to change; empty when they
 * can. The Webhook modes ask the API server, so they need the agent's orchconfig.
 */
export function unsupportedServerSettings(config: AgentServerConfig, hasApiServer = false): string[] {
  const problems: string[] = [];
  if (config.enableServer && config.authorizationMode === 'Webhook' && !hasApiServer) {
    problems.push('--authorization-mode=Webhook asks the API server with SubjectAccessReviews: give the agent an --orchconfig, or use --authorization-mode=AlwaysAllow');
  }
  if (config.enableServer && config.authenticationTokenWebhook && !hasApiServer) {
    problems.push('--authentication-token-webhook asks the API server with TokenReviews: give the agent an --orchconfig, or set it to false');
  }
  return problems;
}
