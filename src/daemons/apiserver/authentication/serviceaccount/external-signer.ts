/**
 * `--service-account-signing-endpoint`: an external signer of service account tokens, upstream's
 * ExternalJWTSigner gRPC API (k8s.io/externaljwt/apis/v1, served on a unix socket): `Sign` returns
 * the header and signature for claims the API server assembled, `FetchKeys` the public keys that
 * verify tokens (refreshed every `refresh_hint_seconds`, and at once, at most once a second, when a
 * token names a key id not known yet), `Metadata` the longest token lifetime it signs.
 *
 * Why protobufjs and grpc-js without a proto loader: the messages are five small ones; protobufjs
 * (already used for the API's protobuf) parses the definition below, grpc-js carries the calls, and
 * nothing has to be found on disk at run time (the CLI is bundled).
 */
import {createPublicKey, type KeyObject} from 'node:crypto';
import {UnaryClient, unaryService} from '../../../shared/grpc-unary.js';
import {signingAlgorithm} from '../../../shared/serving/jwt-keys.js';

/** The API's messages, as upstream's api.proto (package v1), with google.protobuf.Timestamp inline. */
const PROTO = `
syntax = "proto3";
package v1;
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
message SignJWTRequest { string claims = 1; }
message SignJWTResponse { string header = 1; string signature = 2; }
message FetchKeysRequest {}
message Key { string key_id = 1; bytes key = 2; bool exclude_from_oidc_discovery = 3; }
message FetchKeysResponse { repeated Key keys = 1; Timestamp data_timestamp = 2; int64 refresh_hint_seconds = 3; }
message MetadataRequest {}
message MetadataResponse { int64 max_token_expiration_seconds = 1; }
`;

/** The service definition, for the client here and for a signer a test serves with grpc-js. */
export const EXTERNAL_JWT_SIGNER_SERVICE = unaryService(PROTO, 'v1', 'ExternalJWTSigner', {
  Sign: ['SignJWTRequest', 'SignJWTResponse'],
  FetchKeys: ['FetchKeysRequest', 'FetchKeysResponse'],
  Metadata: ['MetadataRequest', 'MetadataResponse'],
});

export interface ExternalKey {
  kid: string;
  alg?: string;
  key: KeyObject;
  excludeFromDiscovery: boolean;
}

/** Upstream's bounds: a call may take 60 s at most; unknown key ids refresh at most once a second. */
const CALL_TIMEOUT_MS = 60_000;
const MIN_REFRESH_GAP_MS = 1000;
const ALGORITHMS = new Set(['RS256', 'ES256', 'ES384', 'ES512']);

/** Pure: the header a signer returned, checked as upstream's validateJWTHeader (only alg, kid and typ; typ JWT). */
export function checkSignedHeader(header: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch (error) {
    return `while parsing header JSON: ${(error as Error).message}`;
  }
  if (typeof parsed !== 'object' || parsed === null) return 'while parsing header JSON: not an object';
  const h = parsed as Record<string, unknown>;
  const unknown = Object.keys(h).filter((k) => !['alg', 'kid', 'typ'].includes(k));
  if (unknown.length > 0) return `while parsing header JSON: json: unknown field ${JSON.stringify(unknown[0])}`;
  if (h.typ !== 'JWT') return 'bad type';
  if (typeof h.kid !== 'string' || h.kid === '') return 'key id missing';
  if (h.kid.length > 1024) return 'key id longer than 1024 characters';
  if (!ALGORITHMS.has(String(h.alg))) return `bad signing algorithm ${JSON.stringify(h.alg)}`;
  return undefined;
}

export class ExternalSigner {
  private readonly client: UnaryClient;
  private keySet: ExternalKey[] = [];
  private refreshing?: Promise<void>;
  private lastRefresh = 0;
  private timer?: NodeJS.Timeout;
  /** The longest lifetime the signer signs (Metadata). */
  maxTokenExpirationSeconds = 0;

  private constructor(readonly socketPath: string, private readonly log: (message: string) => void) {
    this.client = new UnaryClient(EXTERNAL_JWT_SIGNER_SERVICE, 'ExternalJWTSigner', socketPath);
  }

  /** Connects, reads the metadata and the keys; an unreachable signer is a start error naming the option. */
  static async connect(socketPath: string, log: (message: string) => void, timeoutMs = 10_000): Promise<ExternalSigner> {
    const signer = new ExternalSigner(socketPath, log);
    try {
      const metadata = await signer.call('Metadata', {}, timeoutMs);
      signer.maxTokenExpirationSeconds = Number(metadata.max_token_expiration_seconds ?? 0);
      if (signer.maxTokenExpirationSeconds < 600) throw new Error(`max_token_expiration_seconds is ${signer.maxTokenExpirationSeconds}: it must be at least 600`);
      await signer.fetchKeys(timeoutMs);
    } catch (error) {
      signer.close();
      throw new Error(`--service-account-signing-endpoint ${socketPath}: ${(error as Error).message}`);
    }
    return signer;
  }

  private call(name: 'Sign' | 'FetchKeys' | 'Metadata', request: object, timeoutMs = CALL_TIMEOUT_MS): Promise<Record<string, unknown>> {
    return this.client.call(name, request, timeoutMs);
  }

  private async fetchKeys(timeoutMs = CALL_TIMEOUT_MS): Promise<void> {
    const response = await this.call('FetchKeys', {}, timeoutMs);
    const keys: ExternalKey[] = [];
    for (const raw of (response.keys ?? []) as Array<{key_id: string; key: Buffer; exclude_from_oidc_discovery: boolean}>) {
      let key: KeyObject;
      try {
        key = createPublicKey({key: raw.key, format: 'der', type: 'spki'});
      } catch (error) {
        throw new Error(`while parsing external public keys: ${(error as Error).message}`);
      }
      keys.push({kid: raw.key_id, alg: signingAlgorithm(key), key, excludeFromDiscovery: raw.exclude_from_oidc_discovery});
    }
    this.keySet = keys;
    this.lastRefresh = Date.now();
    const hint = Number(response.refresh_hint_seconds ?? 0);
    if (this.timer) clearTimeout(this.timer);
    // A hint of 0 or less is the signer's misconfiguration (upstream): keep refreshing every minute.
    this.timer = setTimeout(() => void this.refresh().catch((e: Error) => this.log(`external signer: fetching keys failed: ${e.message}`)), (hint > 0 ? hint : 60) * 1000);
    this.timer.unref();
  }

  /** The keys that verify tokens now. */
  keys(): readonly ExternalKey[] {
    return this.keySet;
  }

  /** Fetches the keys again (single-flighted; at most once a second for unknown key ids). */
  refresh(): Promise<void> {
    this.refreshing ??= this.fetchKeys().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** A token named a key id not known yet: maybe the signer rotated. */
  async refreshForUnknownKey(kid: string | undefined): Promise<boolean> {
    if (kid !== undefined && this.keySet.some((k) => k.kid === kid)) return false;
    if (Date.now() - this.lastRefresh < MIN_REFRESH_GAP_MS) return false;
    await this.refresh().catch((e: Error) => this.log(`external signer: fetching keys failed: ${e.message}`));
    return true;
  }

  /** Signs the claims: the signer returns the header and signature; the API server assembles the JWT. */
  async sign(claims: Record<string, unknown>): Promise<string> {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const response = await this.call('Sign', {claims: payload}).catch((error: Error) => {
      throw new Error(`while signing jwt: ${error.message}`);
    });
    const header = String(response.header ?? '');
    const problem = checkSignedHeader(header);
    if (problem) throw new Error(`while validating header: ${problem}`);
    return `${header}.${payload}.${String(response.signature ?? '')}`;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.client.close();
  }
}
