// A write load against the API server from its own process, as a user's client would send it: ConfigMap
// creates of given body sizes over HTTP/1.1 keep-alive, HTTP/1.1 with `Connection: close`, or HTTP/2
// with many streams per connection, on 1..N connections. Plain JavaScript so that tests (spawned as a
// child process, so client and server do not share an event loop: the HTTP/1.1 reset of issue 18 needs
// a client that answers faster than the server's own event loop turns) and bench/traffic.mjs use the
// same code.
//
// Every request ends in one of three ways, which is what the caller checks against a final list:
// acknowledged (201), refused with a Status (any other HTTP answer) or unknown (a connection error
// before an answer: the client cannot tell whether the write was applied).
//
// CLI: node test/helpers/traffic-load.mjs '<json options>' prints the JSON result on stdout.
import {Agent, request as httpsRequest} from 'node:https';
import {connect as http2Connect, constants as h2} from 'node:http2';
import {readFileSync} from 'node:fs';
import {fileURLToPath} from 'node:url';
import {parse as parseYaml, stringify as stringifyYaml} from 'yaml';

/** Server URL and admin credentials from an orchconfig (embedded data, as the API server writes it). */
export function credentialsOf(orchconfigPath) {
  const config = parseYaml(readFileSync(orchconfigPath, 'utf8'));
  const b64 = (s) => Buffer.from(s, 'base64');
  return {
    server: config.clusters[0].cluster.server,
    ca: b64(config.clusters[0].cluster['certificate-authority-data']),
    cert: b64(config.users[0].user['client-certificate-data']),
    key: b64(config.users[0].user['client-key-data']),
  };
}

// Protobuf by hand: a ConfigMap is four fields deep, and the envelope (magic + runtime.Unknown) is
// what kubectl's typed clients send; a schema library would be more code than this.
const varint = (n) => {
  const bytes = [];
  while (n > 127) {
    bytes.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes);
};
const field = (number, value) => {
  const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value);
  return Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);
};
const mapEntry = (number, key, value) => field(number, Buffer.concat([field(1, key), field(2, value)]));

/** A v1 ConfigMap in the Kubernetes protobuf envelope (k8s\0 + runtime.Unknown). */
export function configMapProtobuf(name, labels, data) {
  const meta = Buffer.concat([field(1, name), ...Object.entries(labels).map(([k, v]) => mapEntry(11, k, v))]);
  const raw = Buffer.concat([field(1, meta), ...Object.entries(data).map(([k, v]) => mapEntry(2, k, v))]);
  const unknown = Buffer.concat([field(1, Buffer.concat([field(1, 'v1'), field(2, 'ConfigMap')])), field(2, raw)]);
  return Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), unknown]);
}

/** A ConfigMap whose serialized body is about `size` bytes, in JSON, YAML or protobuf; size 0: an empty body. */
export function configMapBody(name, size, format = 'json') {
  if (size === 0) return Buffer.alloc(0);
  const labels = {traffic: 'load'};
  const data = {k: 'x'.repeat(Math.max(0, size - 120))};
  if (format === 'protobuf') return configMapProtobuf(name, labels, data);
  const object = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels}, data};
  return format === 'yaml' ? Buffer.from(stringifyYaml(object)) : Buffer.from(JSON.stringify(object));
}

const CONTENT_TYPES = {json: 'application/json', yaml: 'application/yaml', protobuf: 'application/vnd.kubernetes.protobuf'};

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One HTTP/1.1 exchange; resolves {status, body} or {error}. */
function http1Exchange(creds, agent, method, path, body, headers) {
  return new Promise((resolve) => {
    const req = httpsRequest(new URL(path, creds.server), {method, agent, headers: {...headers, ...(body ? {'content-length': body.length} : {})}, timeout: 90_000}, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', (error) => resolve({error}));
      res.on('end', () => resolve({status: res.statusCode, body: Buffer.concat(chunks)}));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (error) => resolve({error}));
    req.end(body);
  });
}

/** One HTTP/2 stream on `session`. */
function http2Exchange(session, method, path, body, headers) {
  return new Promise((resolve) => {
    let stream;
    try {
      stream = session.request({[h2.HTTP2_HEADER_METHOD]: method, [h2.HTTP2_HEADER_PATH]: path, ...headers, ...(body ? {'content-length': body.length} : {})});
    } catch (error) {
      resolve({error});
      return;
    }
    let status = 0;
    const chunks = [];
    stream.setTimeout(60_000, () => stream.close(h2.NGHTTP2_CANCEL));
    stream.on('response', (h) => (status = h[h2.HTTP2_HEADER_STATUS]));
    stream.on('data', (c) => chunks.push(c));
    stream.on('error', (error) => resolve({error}));
    stream.on('close', () => (status ? resolve({status, body: Buffer.concat(chunks)}) : resolve({error: new Error(`stream closed without a response (code ${stream.rstCode})`)})));
    stream.end(body);
  });
}

/**
 * A watch of the load's ConfigMaps (label traffic=load) on the given HTTP/2 session or HTTP/1.1 agent:
 * collects the names of ADDED objects. Like client-go's reflector, it watches again from the
 * highest resourceVersion it received whenever the server ends the stream (upstream and orch end a watch
 * whose client falls too far behind, and every watch at its timeout), so an event is missed only
 * if the server really lost it. `restarts` counts those re-watches, `errors` the ERROR events
 * (a 410 would mean a relist; none is expected here). stop() ends it.
 */
function openWatch(creds, transport, namespace, protocol) {
  const seen = new Set();
  const state = {restarts: 0, errors: [], stopped: false, resourceVersion: undefined, stop: () => undefined};
  const pathAt = (rv) => `/api/v1/namespaces/${namespace}/configmaps?watch=1&labelSelector=traffic%3Dload&timeoutSeconds=600${rv ? `&resourceVersion=${rv}` : ''}`;
  const start = (onReady) => {
    let buffer = '';
    const onData = (chunk) => {
      buffer += chunk.toString('utf8');
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.trim()) continue;
        const event = JSON.parse(line);
        if (event.type === 'ERROR') {
          state.errors.push(event.object?.message ?? JSON.stringify(event.object));
          // 410 Gone: the history is compacted past where this watch was; list again (a watch
          // without a resourceVersion starts with the whole state), as a reflector relists.
          if (event.object?.code === 410) state.resourceVersion = undefined;
          continue;
        }
        // The highest seen, not the last: the initial ADDED events come in key order, and a
        // snapshot at list revision L holds every object up to it, so resuming from the highest
        // object revision only replays events the snapshot already reflects.
        const rv = Number(event.object?.metadata?.resourceVersion);
        if (rv > (state.resourceVersion ?? 0)) state.resourceVersion = rv;
        if (event.type === 'ADDED') seen.add(event.object.metadata.name);
      }
    };
    // The stream ended without stop() (or failed to start): watch again from where it was, after
    // a short pause as a reflector backs off.
    let ended = false;
    const onEnd = () => {
      if (ended) return;
      ended = true;
      onReady();
      if (state.stopped) return;
      state.restarts++;
      setTimeout(() => state.stopped || start(() => undefined), 100);
    };
    const path = pathAt(state.resourceVersion);
    if (protocol === 'h2') {
      let stream;
      try {
        stream = transport().request({[h2.HTTP2_HEADER_METHOD]: 'GET', [h2.HTTP2_HEADER_PATH]: path, accept: 'application/json'});
      } catch {
        return onEnd();
      }
      stream.on('response', () => onReady());
      stream.on('data', onData);
      stream.on('error', () => undefined);
      stream.on('close', onEnd);
      stream.end();
      state.stop = () => stream.close(h2.NGHTTP2_CANCEL);
    } else {
      const req = httpsRequest(new URL(path, creds.server), {method: 'GET', agent: transport, headers: {accept: 'application/json'}}, (res) => {
        onReady();
        res.on('data', onData);
        res.on('error', () => undefined);
        res.on('close', onEnd);
      });
      req.on('error', onEnd);
      req.end();
      state.stop = () => req.destroy();
    }
  };
  const ready = new Promise((resolve) => start(resolve));
  return {
    seen,
    ready,
    watchState: state,
    stop: () => {
      state.stopped = true;
      state.stop();
    },
  };
}

/**
 * Runs the load. Options: orchconfig, protocol ('http1' | 'http1-close' | 'h2'), connections, concurrency
 * (in-flight requests in all; default = connections for HTTP/1.1, 8 x connections for HTTP/2), count (per
 * size), sizes (bytes), format ('json' | 'yaml'), namespace, prefix (object names: <prefix>-<size>-<i>).
 */
export async function runLoad(options) {
  const creds = credentialsOf(options.orchconfig);
  const protocol = options.protocol ?? 'http1';
  const connections = options.connections ?? 1;
  const concurrency = options.concurrency ?? (protocol === 'h2' ? connections * 8 : connections);
  const format = options.format ?? 'json';
  const namespace = options.namespace ?? 'default';
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  const headers = {'content-type': CONTENT_TYPES[format], accept: 'application/json', ...(protocol === 'http1-close' ? {connection: 'close'} : {})};

  const agent = protocol === 'h2' ? undefined : new Agent({keepAlive: protocol === 'http1', maxSockets: connections + (options.watch ? 1 : 0), ca: creds.ca, cert: creds.cert, key: creds.key});
  const sessions = [];
  const sessionAt = (i) => {
    const index = i % connections;
    let s = sessions[index];
    if (!s || s.closed || s.destroyed) {
      // Node's client counts the request bodies it has queued against its own maxSessionMemory
      // (10 MB by default) and refuses response headers past it with ENHANCE_YOUR_CALM: eight 3 MB
      // bodies at once on one connection failed in the client, not in the server. Go's client
      // (kubectl) has no such limit; this one gets room for what it sends at once.
      // Flow-control windows as Go's transport (kubectl, client-go) sets them: 4 MiB per stream and
      // 1 GiB per connection; Node's 64 KiB default holds a watch to a window per event-loop turn.
      s = http2Connect(creds.server, {ca: creds.ca, cert: creds.cert, key: creds.key, maxSessionMemory: 128, settings: {initialWindowSize: 4 << 20}});
      s.once('connect', (session) => session.setLocalWindowSize(1 << 30));
      s.on('error', () => undefined);
      sessions[index] = s;
    }
    return s;
  };

  const watches = [];
  if (options.watch) {
    if (protocol === 'h2') for (let i = 0; i < connections; i++) watches.push(openWatch(creds, () => sessionAt(i), namespace, protocol));
    else watches.push(openWatch(creds, agent, namespace, protocol));
    await Promise.all(watches.map((w) => w.ready));
  }

  const results = [];
  for (const size of options.sizes) {
    const result = {protocol, connections, format, size, requests: 0, failures: 0, errors: {}, acknowledged: [], refused: [], unknown: [], p99Ms: 0, p50Ms: 0};
    const latencies = [];
    let next = 0;
    const worker = async () => {
      while (next < options.count) {
        const i = next++;
        const name = `${options.prefix}-${size}-${i}`;
        const body = configMapBody(name, size, format);
        const started = performance.now();
        const answer = protocol === 'h2' ? await http2Exchange(sessionAt(i), 'POST', path, body, headers) : await http1Exchange(creds, agent, 'POST', path, body, headers);
        latencies.push(performance.now() - started);
        result.requests++;
        if (answer.error) {
          result.failures++;
          const kind = answer.error.code ?? answer.error.message;
          result.errors[kind] = (result.errors[kind] ?? 0) + 1;
          result.unknown.push(name);
        } else if (answer.status === 201) {
          result.acknowledged.push(name);
        } else {
          let status;
          try {
            status = JSON.parse(answer.body.toString());
          } catch {
            status = undefined;
          }
          result.refused.push({name, code: answer.status, kind: status?.kind, message: status?.message});
          // A refusal with a Status is an answer, not a lost write; only non-Status answers count as failures.
          if (status?.kind !== 'Status') {
            result.failures++;
            result.errors[`HTTP ${answer.status}`] = (result.errors[`HTTP ${answer.status}`] ?? 0) + 1;
          }
        }
      }
    };
    await Promise.all(Array.from({length: concurrency}, worker));
    latencies.sort((a, b) => a - b);
    result.p99Ms = Math.round(percentile(latencies, 99) * 10) / 10;
    result.p50Ms = Math.round(percentile(latencies, 50) * 10) / 10;
    results.push(result);
  }
  if (watches.length) {
    // Events trail the acknowledgements a little; give them a bounded time to arrive.
    const acknowledged = results.flatMap((r) => r.acknowledged);
    const missing = () => acknowledged.filter((n) => !watches.every((w) => w.seen.has(n)));
    for (let waited = 0; missing().length > 0 && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    for (const r of results) {
      r.watchMissing = r.acknowledged.filter((n) => !watches.every((w) => w.seen.has(n)));
      r.watchRestarts = watches.reduce((n, w) => n + w.watchState.restarts, 0);
      r.watchErrors = watches.flatMap((w) => w.watchState.errors);
    }
    for (const w of watches) w.stop();
  }
  agent?.destroy();
  for (const s of sessions) s?.close();
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = await runLoad(JSON.parse(process.argv[2]));
  process.stdout.write(JSON.stringify(results));
}
