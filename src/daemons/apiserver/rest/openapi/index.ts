/**
 * Serving `/openapi/v2` and `/openapi/v3` as upstream's kube-openapi handlers do:
 * - v2 in JSON, or in protobuf when the client asks for it (kubectl does);
 * - the v3 index (`{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=<H>"}}}`)
 *   and each group version's document with an ETag of its hash; a request carrying the current
 *   `?hash=` gets `Cache-Control: public, immutable` (clients such as kubectl cache it by URL), a
 *   stale hash a 301 to the current URL, and `If-None-Match` with the ETag a 304.
 * Documents are built on demand and cached until the served resources or the registered schemas
 * change.
 */
import { createHash } from 'node:crypto';
import type { ResourceRegistry } from '../../../../api/resources.js';
import { names } from '../../../../api/names.js';
import type { Schema } from '../../../../api/schema/definitions.js';
import { writePlainNotFound } from '../http-io.js';
import type { ApiRequest, ApiResponse } from '../types.js';
import type { SchemaRegistry } from '../validation/schema-registry.js';
import { openApiPath, openApiV2Document, openApiV3Document } from './documents.js';
import { encodeOpenApiV2 } from './protobuf.js';

export { openApiPath, openApiV2Document, openApiV3Document, customDefinitionName } from './documents.js';

/** What kubectl sends in Accept; Go's mime parser refuses its `@`, so the answer's Content-Type is kube-openapi's other spelling. */
export const OPENAPI_V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

interface Cached {
  body: Buffer;
  etag: string;
}

/** Upstream's ETag/hash of a document: SHA-512 of its bytes, upper-case hex. */
export function documentHash(body: Buffer): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

export class OpenApiService {
  private key = '';
  private v2json?: Cached;
  private v2proto?: Cached;
  private readonly v3 = new Map<string, Cached | null>();

  constructor(private readonly registry: ResourceRegistry, private readonly schemas: SchemaRegistry) {}

  /** Invalidates the cache when the name set, the served group versions or the custom schemas changed. */
  private fresh(): void {
    const gvs = this.registry.groupVersions().map((gv) => `${gv.group}/${gv.version}:${gv.resources.map((r) => r.plural).join(',')}`).join(';');
    const key = `${names().id}|${this.schemas.revision}|${gvs}`;
    if (key === this.key) return;
    this.key = key;
    this.v2json = this.v2proto = undefined;
    this.v3.clear();
  }

  private cache(body: Buffer): Cached {
    return { body, etag: documentHash(body) };
  }

  v2(protobuf: boolean): Cached {
    this.fresh();
    if (protobuf) {
      this.v2proto ??= this.cache(encodeOpenApiV2(openApiV2Document(this.schemas) as { swagger: string; info: { title: string; version: string }; definitions: Record<string, Schema> }));
      return this.v2proto;
    }
    this.v2json ??= this.cache(Buffer.from(JSON.stringify(openApiV2Document(this.schemas))));
    return this.v2json;
  }

  /** A group version's v3 document (`api/v1`, `apis/apps/v1`), or undefined when not served. */
  v3Document(path: string): Cached | undefined {
    this.fresh();
    if (!this.v3.has(path)) {
      const parts = path.split('/');
      const doc = parts[0] === 'api' && parts.length === 2
        ? openApiV3Document(this.registry, this.schemas, '', parts[1]!)
        : parts[0] === 'apis' && parts.length === 3 ? openApiV3Document(this.registry, this.schemas, parts[1]!, parts[2]!) : undefined;
      this.v3.set(path, doc ? this.cache(Buffer.from(JSON.stringify(doc))) : null);
    }
    return this.v3.get(path) ?? undefined;
  }

  v3Index(): Record<string, unknown> {
    this.fresh();
    const paths: Record<string, unknown> = {};
    for (const gv of this.registry.groupVersions()) {
      const path = openApiPath(gv.group, gv.version);
      const doc = this.v3Document(path);
      if (doc) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.etag}` };
    }
    return { paths };
  }

  /** Answers a request below `/openapi/`. */
  serve(req: ApiRequest, res: ApiResponse, url: URL): void {
    const path = url.pathname.replace(/\/+$/, '');
    if (path === '/openapi/v2') {
      const accept = headerOf(req, 'accept');
      const protobuf = accept.includes(OPENAPI_V2_PROTOBUF_ACCEPT) || accept.includes(OPENAPI_V2_PROTOBUF);
      return send(req, res, this.v2(protobuf), protobuf ? OPENAPI_V2_PROTOBUF : 'application/json', false);
    }
    if (path === '/openapi/v3') {
      const body = Buffer.from(JSON.stringify(this.v3Index()));
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length, 'Cache-Control': 'no-cache, private' });
      res.end(body);
      return;
    }
    if (!path.startsWith('/openapi/v3/')) return writePlainNotFound(res);
    const docPath = path.slice('/openapi/v3/'.length);
    const doc = this.v3Document(docPath);
    if (!doc) return writePlainNotFound(res);
    const hash = url.searchParams.get('hash');
    if (hash !== null && hash !== '' && hash !== doc.etag) {
      const location = `/openapi/v3/${docPath}?hash=${doc.etag}`;
      res.writeHead(301, { Location: location, 'Content-Length': 0 });
      res.end();
      return;
    }
    send(req, res, doc, 'application/json', hash === doc.etag);
  }
}

function headerOf(req: ApiRequest, name: string): string {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

function send(req: ApiRequest, res: ApiResponse, doc: Cached, contentType: string, immutable: boolean): void {
  const etag = `"${doc.etag}"`;
  const headers: Record<string, string | number> = { 'Content-Type': contentType, ETag: etag, Vary: 'Accept' };
  if (immutable) {
    headers['Cache-Control'] = 'public, immutable';
    headers.Expires = new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString();
  }
  const inm = headerOf(req, 'if-none-match');
  if (inm && inm.split(',').map((t) => t.trim()).includes(etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, 'Content-Length': doc.body.length });
  res.end(doc.body);
}
