// Throughput and p99 latency of `orch apiserver` (the built CLI, in its own process) on both engines,
// each figure compared with what this run measures as the ceiling:
// - GET of one pod, LIST of 1,000 pods: against a bare node:https server (same TLS certificates, client
//   certificate requested the same way) answering the same JSON bytes. Target: GET >= 0.5x bare.
// - PATCH (merge) of a pod by each of 32 clients: against the store's own write rate, timed here with
//   store.update calls directly on the engine (SqliteStore / EtcdStore). Target: PATCH >= 0.5x store.
// - A second ceiling for PATCH: the bare server writing each PATCH's pod to the same engine with
//   store.update before it answers (the store write and the HTTPS exchange, nothing else). Its ratio to
//   the store's rate is the most any server can reach here against the PATCH target.
// - Schema validation (case `validation`): create, update (PUT) and server-side apply rates of a server validating every
//   write against the schemas, as ratios to the same writes on a second server run with validation off
//   (the internal, bench-only switch ORCH_INTERNAL_SCHEMA_VALIDATION=off). Target: >= 0.8x (validation
//   costs at most 25%), and the servers' CPU time per request on/off (Linux /proc), steadier than rates
//   on a shared machine. VALIDATION_NOISE_FLOOR=1 runs both servers with validation off: the ratios
//   then show the comparison's own noise.
// - GET of one pod with a service account token (TokenRequest) against the same GET with the admin
//   client certificate, in the same run (case `token`). Target: >= 0.8x.
// All load comes from 32 concurrent clients over HTTP/1.1 keep-alive with the admin client certificate.
// Run with `npm run build` first (the server is the built CLI). Environment: ROUNDS (3), ROUND_SECONDS (1),
// ENGINES (sqlite,etcd), CLIENTS (32), SERVER_NODE_OPTIONS (node flags for the server process), CASES
// (get,list,patch,validation,apply,rbac,token,audit,encryption,admission,media,apf: a subset, e.g. to profile one case).
// - Priority and fairness (case `apf`): GET and create rates of a user (a bearer token; global-default,
//   a queuing level, not the administrator's exempt one) with --enable-priority-and-fairness on (the
//   default), as ratios to a server run with it off (max-in-flight) in the same run. Target: >= 0.9x.
//   APF_NOISE_FLOOR=1 runs both servers with it off: the ratios then show the machine's noise alone.
// - Admission (case `admission`): pod creates per second with the default admission plugins, and with
//   the default set plus one validating webhook (a small HTTPS server on loopback allowing everything)
//   and one ValidatingAdmissionPolicy with its binding, as ratios to a server run with
//   `--admission-control=` (no plugin) in the same run. Targets: default set >= 0.85x, webhook and
//   policy >= 0.5x. The webhook and policy part runs once the server has both plugins built (its
//   start log names the plugins in effect); until then its row says it was skipped.
// - Server-side apply (PATCH application/apply-patch+yaml) of pods: applies that create a pod, and
//   applies that change a label of each client's own pod, both against POST (create) of the same pod
//   in the same run: the cost of merging, field sets and conflict checks over a plain create.
import {spawn, fork} from 'node:child_process';
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {createServer as createHttpsServer, Agent, request} from 'node:https';
import {createServer as createNetServer} from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {build} from 'esbuild';
import {parse as parseYaml} from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUND_SECONDS = Number(process.env.ROUND_SECONDS ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CLIENTS = Number(process.env.CLIENTS ?? 32);
const ENGINES = (process.env.ENGINES ?? 'sqlite,etcd').split(',');
const LIST_SIZE = 1000;
const CASES = new Set((process.env.CASES ?? 'get,list,patch,validation,apply,rbac,token,audit,encryption,admission,media,apf').split(','));
const PODS = '/api/v1/namespaces/default/pods';

// --- the bare server, run as a child process of this script (`node bench/apiserver.mjs bare <pki> <port>`) ---
if (process.argv[2] === 'bare') {
  const [pki, port, bundleDir, engine, target] = [process.argv[3], Number(process.argv[4]), ...process.argv.slice(5)];
  const bodies = new Map(); // path -> JSON bytes, sent by the parent
  // With an engine: each PATCH writes the pod to the store first, one key per client connection.
  const storage = engine ? await import(pathToFileURL(join(bundleDir, 'storage.js')).href) : undefined;
  const store = !storage ? undefined : engine === 'etcd' ? new storage.EtcdStore({endpoints: [target]}) : new storage.SqliteStore({path: target});
  const connections = new WeakMap(); // socket -> {key, revision}
  let nextConnection = 0;
  const writeFor = async (socket, value) => {
    let state = connections.get(socket);
    if (!state) {
      const key = `/barestore-${port}/pods/default/p${nextConnection++}`;
      state = {key, revision: await store.create(key, value)};
      connections.set(socket, state);
    }
    state.revision = await store.update(state.key, value, state.revision);
  };
  const server = createHttpsServer(
    {
      key: readFileSync(join(pki, 'apiserver.key')),
      cert: Buffer.concat([readFileSync(join(pki, 'apiserver.crt')), readFileSync(join(pki, 'ca.crt'))]),
      ca: readFileSync(join(pki, 'ca.crt')),
      requestCert: true,
      rejectUnauthorized: false,
      keepAliveTimeout: 60_000,
    },
    (req, res) => {
      // Read the body as the API server does, then answer the stored JSON for that path.
      req.on('data', () => undefined);
      req.on('end', async () => {
        const body = bodies.get(req.url.split('?')[0]) ?? Buffer.from('{}');
        if (store && req.method === 'PATCH') await writeFor(req.socket, body.toString('utf8'));
        res.writeHead(200, {'Content-Type': 'application/json', 'Content-Length': body.length, 'Cache-Control': 'no-cache, private'});
        res.end(body);
      });
    },
  );
  process.on('message', (m) => {
    bodies.set(m.path, Buffer.from(m.body, 'base64'));
    process.send({ok: m.path});
  });
  server.listen(port, '127.0.0.1', () => process.send({listening: port}));
} else {
  await main();
}

async function main() {
  if (!existsSync(join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build');
  const lib = await loadTsModules();
  process.on('exit', () => rmSync(lib.dir, {recursive: true, force: true}));
  console.log(
    `orch apiserver bench: ${CLIENTS} concurrent clients, HTTP/1.1 keep-alive with the admin client certificate; each figure the median of ${ROUNDS} rounds of ${ROUND_SECONDS}s, orch and baseline alternating`,
  );
  const results = [];
  let etcd;
  try {
    for (const engine of ENGINES) {
      if (engine === 'etcd' && !etcd) etcd = await lib.startEtcd();
      if (['get', 'list', 'patch', 'apply', 'token'].some((c) => CASES.has(c))) results.push(...(await benchEngine(engine, engine === 'etcd' ? etcd.endpoint : undefined, lib)));
      if (CASES.has('validation')) results.push(...(await benchValidation(engine, engine === 'etcd' ? etcd.endpoint : undefined)));
      if (CASES.has('rbac')) results.push(...(await benchRbac(engine, engine === 'etcd' ? etcd.endpoint : undefined)));
      if (CASES.has('audit')) results.push(...(await benchAudit(engine, engine === 'etcd' ? etcd.endpoint : undefined)));
      if (CASES.has('encryption')) results.push(...(await benchEncryption(engine, engine === 'etcd' ? etcd.endpoint : undefined, lib)));
      if (CASES.has('media')) results.push(...(await benchMediaType(engine, engine === 'etcd' ? etcd.endpoint : undefined)));
      if (CASES.has('admission')) results.push(...(await benchAdmission(engine, engine === 'etcd' ? etcd.endpoint : undefined)));
      if (CASES.has('apf')) results.push(...(await benchApf(engine, engine === 'etcd' ? etcd.endpoint : undefined)));
    }
  } finally {
    await etcd?.stop();
  }
  printTable(results);
  const failed = results.filter((r) => r.ok === false);
  if (failed.length) {
    console.log(`\n${failed.length} figure(s) under target`);
    process.exitCode = 1;
  }
}

/** The store engines and the etcd test helper are TypeScript: bundle them once for this run (removed on exit). */
async function loadTsModules() {
  // Inside the repository, so that the bundles' imports of etcd3 and better-sqlite3 resolve from node_modules.
  mkdirSync(join(root, 'node_modules', '.cache'), {recursive: true});
  const out = mkdtempSync(join(root, 'node_modules', '.cache', 'orch-bench-'));
  {
    const entries = {
      storage: join(root, 'src/daemons/apiserver/storage/index.ts'),
      etcd: join(root, 'test/helpers/etcd.ts'),
      pki: join(root, 'src/daemons/shared/pki/certificates.ts'),
      kms: join(root, 'src/daemons/apiserver/encryption/kms/api.ts'),
    };
    await build({
      entryPoints: entries,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: out,
      external: ['better-sqlite3', 'etcd3'],
      banner: {js: "import {createRequire as __cr} from 'node:module'; const require = __cr(import.meta.url);"},
      logLevel: 'error',
    });
    const storage = await import(pathToFileURL(join(out, 'storage.js')).href);
    const etcd = await import(pathToFileURL(join(out, 'etcd.js')).href);
    const pki = await import(pathToFileURL(join(out, 'pki.js')).href);
    const kms = await import(pathToFileURL(join(out, 'kms.js')).href);
    return {dir: out, SqliteStore: storage.SqliteStore, EtcdStore: storage.EtcdStore, startEtcd: etcd.startEtcd, pki, KMS_V2_SERVICE: kms.KMS_V2_SERVICE};
  }
}

/** An OpenID issuer on 127.0.0.1 (discovery and JWKS over HTTPS with its own CA) and a way to mint ID tokens. */
async function startOidcIssuer(lib, dir) {
  const {SignJWT, exportJWK, generateKeyPair} = await import('jose');
  const {writeFileSync} = await import('node:fs');
  const ca = await lib.pki.generateCa();
  const cert = await lib.pki.generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
  const keys = await generateKeyPair('RS256');
  const jwk = {...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig'};
  let issuer;
  const server = createHttpsServer({cert: cert.certPem, key: cert.keyPem}, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') return res.end(JSON.stringify({issuer, jwks_uri: `${issuer}/keys`}));
    if (req.url === '/keys') return res.end(JSON.stringify({keys: [jwk]}));
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  issuer = `https://127.0.0.1:${server.address().port}`;
  const caFile = join(dir, 'oidc-ca.crt');
  writeFileSync(caFile, ca.certPem);
  const token = () => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({iss: issuer, aud: 'bench', email: 'bench@example.com', iat: now, exp: now + 3600}).setProtectedHeader({alg: 'RS256', kid: 'k1'}).sign(keys.privateKey);
  };
  return {issuer, caFile, token, close: () => server.close()};
}

async function benchEngine(engine, etcdEndpoint, lib) {
  const dataDir = mkdtempSync(join(tmpdir(), `orch-bench-${engine}-`));
  const port = await freePort();
  const args = [join(root, 'bin/run.js'), 'apiserver', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1'];
  if (etcdEndpoint) args.push('--kvstore-servers', etcdEndpoint, '--kvstore-prefix', `/bench-${port}`);
  // The token case also measures OIDC ID tokens: an OpenID issuer on loopback (HTTPS, keys by jose).
  const oidc = CASES.has('token') ? await startOidcIssuer(lib, dataDir) : undefined;
  if (oidc) args.push('--oidc-issuer-url', oidc.issuer, '--oidc-client-id', 'bench', '--oidc-ca-file', oidc.caFile, '--oidc-username-claim', 'email');
  // SERVER_NODE_OPTIONS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the server.
  const nodeArgs = (process.env.SERVER_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
  const server = spawn(process.execPath, [...nodeArgs, ...args], {cwd: root, stdio: ['ignore', 'ignore', 'pipe']});
  let log = '';
  server.stderr.on('data', (c) => (log = (log + c).slice(-5000)));
  let bare;
  let bareStore;
  const agents = [];
  try {
    const creds = await waitForOrchconfig(join(dataDir, 'admin.orchconfig'), server, () => log);
    const agent = new Agent({keepAlive: true, maxSockets: CLIENTS, ca: creds.ca, cert: creds.cert, key: creds.key});
    agents.push(agent);
    const orch = (method, path, body, contentType, headers) => send(agent, creds.server, method, path, body, contentType, headers);
    await waitUntil(async () => (await orch('GET', '/readyz')).status === 200, 'readyz', 20_000);
    await ensureDefaultServiceAccount(orch);

    // 1,000 pods, written by 32 clients.
    const podJson = (i) => JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: `bench-${i}`, labels: {app: 'bench', n: String(i)}}, spec: {containers: [{name: 'app', image: 'nginx:1.27', ports: [{containerPort: 80}]}]}});
    let next = 0;
    await Promise.all(
      Array.from({length: CLIENTS}, async () => {
        while (next < LIST_SIZE) {
          const r = await orch('POST', PODS, podJson(next++), 'application/json');
          if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
        }
      }),
    );

    // The bare server gets the very bytes orch answers.
    const startBare = async (...storeArgs) => {
      const child = fork(fileURLToPath(import.meta.url), ['bare', join(dataDir, 'pki'), String(await freePort()), ...storeArgs], {stdio: ['ignore', 'ignore', 'inherit', 'ipc']});
      const listening = await new Promise((resolve, reject) => {
        child.once('message', (m) => resolve(m.listening));
        child.once('exit', (code) => reject(new Error(`bare server exited ${code}`)));
      });
      return {child, url: `https://127.0.0.1:${listening}`};
    };
    let bareUrl;
    ({child: bare, url: bareUrl} = await startBare());
    const bareAgent = new Agent({keepAlive: true, maxSockets: CLIENTS, ca: creds.ca, cert: creds.cert, key: creds.key});
    agents.push(bareAgent);
    const teach = async (path, body, child = bare) => {
      child.send({path, body: Buffer.from(body).toString('base64')});
      await new Promise((resolve) => child.once('message', resolve));
    };
    const getPath = `${PODS}/bench-0`;
    const one = await orch('GET', getPath);
    const list = await orch('GET', PODS);
    if (JSON.parse(list.body).items.length !== LIST_SIZE) throw new Error('the list does not hold 1000 pods');
    await teach(getPath, one.body);
    await teach(PODS, list.body);
    await teach(`${PODS}/bench-patched`, one.body);

    const rows = [];
    if (CASES.has('get')) {
      const [getOrch, getBare] = await interleaved(
        () => orch('GET', getPath),
        () => send(bareAgent, bareUrl, 'GET', getPath),
      );
      rows.push(row(engine, 'GET one pod', getOrch, 'bare https', getBare, 0.5));
    }
    if (CASES.has('token')) {
      // A service account token (TokenRequest) against the admin client certificate, same GET.
      const sa = await orch('POST', '/api/v1/namespaces/default/serviceaccounts', JSON.stringify({apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'bench'}}), 'application/json');
      if (sa.status !== 201) throw new Error(`service account create failed: ${sa.status} ${sa.body}`);
      const issued = await orch('POST', '/api/v1/namespaces/default/serviceaccounts/bench/token', JSON.stringify({apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {}}), 'application/json');
      const token = JSON.parse(issued.body).status?.token;
      if (!token) throw new Error(`token request failed: ${issued.status} ${issued.body}`);
      const tokenAgent = new Agent({keepAlive: true, maxSockets: CLIENTS, ca: creds.ca});
      agents.push(tokenAgent);
      const [getToken, getCert] = await interleaved(
        () => send(tokenAgent, creds.server, 'GET', getPath, undefined, undefined, {authorization: `Bearer ${token}`}),
        () => orch('GET', getPath),
      );
      rows.push(row(engine, 'GET one pod, SA token', getToken, 'same GET, client cert', getCert, 0.8));
      const idToken = await oidc.token();
      const [getOidc, getCert2] = await interleaved(
        () => send(tokenAgent, creds.server, 'GET', getPath, undefined, undefined, {authorization: `Bearer ${idToken}`}),
        () => orch('GET', getPath),
      );
      rows.push(row(engine, 'GET one pod, OIDC token', getOidc, 'same GET, client cert', getCert2, 0.8));
    }
    if (CASES.has('list')) {
      const [listOrch, listBare] = await interleaved(
        () => orch('GET', PODS),
        () => send(bareAgent, bareUrl, 'GET', PODS),
      );
      rows.push(row(engine, `LIST ${LIST_SIZE} pods`, listOrch, 'bare https', listBare));
    }
    if (CASES.has('apply')) rows.push(...(await benchApply(engine, orch, podJson)));
    if (!CASES.has('patch')) return rows;

    // PATCH: each client patches its own pod (no conflicts between clients), a new label value each time.
    let counter = 0;
    let bareStoreUrl;
    ({child: bareStore, url: bareStoreUrl} = await startBare(lib.dir, engine, engine === 'etcd' ? etcdEndpoint : join(dataDir, 'bare-store.sqlite')));
    await teach(`${PODS}/bench-patched`, one.body, bareStore);
    const patchBody = '{"metadata":{"labels":{"seq":"1"}}}';
    const [patchOrch, patchBare, patchBareStore] = await interleaved(
      (client) => orch('PATCH', `${PODS}/bench-${client}`, JSON.stringify({metadata: {labels: {seq: String(counter++)}}}), 'application/merge-patch+json'),
      () => send(bareAgent, bareUrl, 'PATCH', `${PODS}/bench-patched`, patchBody, 'application/merge-patch+json'),
      () => send(bareAgent, bareStoreUrl, 'PATCH', `${PODS}/bench-patched`, patchBody, 'application/merge-patch+json'),
    );
    rows.push(row(engine, 'PATCH merge (32 pods)', patchOrch, 'bare https', patchBare));

    // The store's own write rate, with the server idle: sequential, then 32 concurrent writers, on
    // pod-sized values, each writer updating its own key with its modRevision as upstream's GuaranteedUpdate.
    const store = engine === 'etcd' ? new lib.EtcdStore({endpoints: [etcdEndpoint]}) : new lib.SqliteStore({path: join(dataDir, 'store-bench.sqlite')});
    try {
      const value = one.body;
      const keyOf = (i) => `/storebench-${port}/pods/default/p${i}`;
      const revs = [];
      for (let i = 0; i < CLIENTS; i++) revs[i] = await store.create(keyOf(i), value);
      // Both figures are medians of ROUNDS rounds, as every other figure.
      const sequential = median(
        await rounds(() =>
          load(1, async () => {
            revs[0] = await store.update(keyOf(0), value, revs[0]);
            return {status: 200};
          }),
        ),
      );
      const concurrent = median(
        await rounds(() =>
          load(CLIENTS, async (client) => {
            revs[client] = await store.update(keyOf(client), value, revs[client]);
            return {status: 200};
          }),
        ),
      );
      rows.push({...row(engine, 'store.update (1 writer)', sequential), note: 'direct on the engine'});
      rows.push({...row(engine, `store.update (${CLIENTS} writers)`, concurrent), note: 'direct on the engine'});
      const ratio = patchOrch.rps / concurrent.rps;
      rows.push({engine, name: 'PATCH vs store.update', rps: patchOrch.rps, p99: patchOrch.p99, ratio, against: `store (${CLIENTS} writers)`, target: 0.5, ok: ratio >= 0.5});
      // What a server doing no work at all reaches against the same store figure: the PATCH ratio's ceiling.
      rows.push({engine, name: 'bare https vs store.update', rps: patchBare.rps, p99: patchBare.p99, ratio: patchBare.rps / concurrent.rps, against: `store (${CLIENTS} writers)`, note: 'ceiling'});
      rows.push({engine, name: 'bare+store vs store.update', rps: patchBareStore.rps, p99: patchBareStore.p99, ratio: patchBareStore.rps / concurrent.rps, against: `store (${CLIENTS} writers)`, note: 'ceiling'});
    } finally {
      await store.close();
    }
    return rows;
  } catch (error) {
    console.error(log);
    throw error;
  } finally {
    for (const a of agents) a.destroy();
    bare?.kill('SIGKILL');
    bareStore?.kill('SIGKILL');
    const gone = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(killer);
    rmSync(dataDir, {recursive: true, force: true});
  }
}

/** An `orch apiserver` process on a fresh data directory; `env` adds environment variables. */
/**
 * The ServiceAccount admission plugin (on by default) refuses pods in a namespace without its
 * `default` account, which the controller manager creates; no controller manager runs here.
 */
async function ensureDefaultServiceAccount(orch) {
  const r = await orch('POST', '/api/v1/namespaces/default/serviceaccounts', JSON.stringify({apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'default'}}), 'application/json');
  if (r.status !== 201 && r.status !== 409) throw new Error(`service account: ${r.status} ${r.body}`);
}

async function startOrch(engine, etcdEndpoint, env = {}, extraArgs = []) {
  const dataDir = mkdtempSync(join(tmpdir(), `orch-bench-${engine}-`));
  const port = await freePort();
  // extraArgs: a list, or a function of the data directory (for options naming files written there).
  const args = [join(root, 'bin/run.js'), 'apiserver', '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', ...(typeof extraArgs === 'function' ? extraArgs(dataDir) : extraArgs)];
  if (etcdEndpoint) args.push('--kvstore-servers', etcdEndpoint, '--kvstore-prefix', `/bench-${port}`);
  // SERVER_NODE_OPTIONS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles these servers too.
  const nodeArgs = (process.env.SERVER_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
  const server = spawn(process.execPath, [...nodeArgs, ...args], {cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: {...process.env, ...env}});
  let log = '';
  server.stderr.on('data', (c) => (log = (log + c).slice(-5000)));
  const stop = async () => {
    agent?.destroy();
    const gone = server.exitCode !== null ? Promise.resolve() : new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(killer);
    rmSync(dataDir, {recursive: true, force: true});
  };
  let agent;
  try {
    const creds = await waitForOrchconfig(join(dataDir, 'admin.orchconfig'), server, () => log);
    agent = new Agent({keepAlive: true, maxSockets: CLIENTS, ca: creds.ca, cert: creds.cert, key: creds.key});
    const orch = (method, path, body, contentType, headers) => send(agent, creds.server, method, path, body, contentType, headers);
    await waitUntil(async () => (await orch('GET', '/readyz')).status === 200, 'readyz', 20_000);
    await ensureDefaultServiceAccount(orch);
    return {orch, stop, log: () => log, pid: server.pid};
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Create and update rates with schema validation on, against a server with it off, in the same run.
 * Each write is a Deployment (a nested schema: pod template, containers, probes, resources), as kubectl
 * sends it (fieldValidation=Strict).
 */
async function benchValidation(engine, etcdEndpoint) {
  const on = await startOrch(engine, etcdEndpoint, process.env.VALIDATION_NOISE_FLOOR ? {ORCH_INTERNAL_SCHEMA_VALIDATION: 'off'} : {});
  const off = await startOrch(engine, etcdEndpoint, {ORCH_INTERNAL_SCHEMA_VALIDATION: 'off'});
  try {
    const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
    const deployment = (name) => JSON.stringify({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name, labels: {app: 'bench'}},
      spec: {
        replicas: 2, selector: {matchLabels: {app: name}},
        template: {metadata: {labels: {app: name}}, spec: {containers: [{
          name: 'app', image: 'nginx:1.27', ports: [{containerPort: 80, name: 'http'}], env: [{name: 'MODE', value: 'bench'}],
          resources: {requests: {cpu: '100m', memory: '64Mi'}, limits: {cpu: 1, memory: '128Mi'}},
          readinessProbe: {httpGet: {path: '/', port: 'http'}, periodSeconds: 5},
        }]}},
      },
    });
    let created = 0;
    const create = (server) => () => server.orch('POST', `${DEPLOYMENTS}?fieldValidation=Strict`, deployment(`d-${created++}`), 'application/json');
    const [createOn, createOff] = await interleaved(withCpu(on, create(on)), withCpu(off, create(off)));
    // Updates: each client replaces its own deployment (created first on both servers), unconditionally.
    for (const server of [on, off]) {
      for (let i = 0; i < CLIENTS; i++) {
        const r = await server.orch('POST', DEPLOYMENTS, deployment(`u-${i}`), 'application/json');
        if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
      }
    }
    const update = (server) => (client) => server.orch('PUT', `${DEPLOYMENTS}/u-${client}?fieldValidation=Strict`, deployment(`u-${client}`), 'application/json');
    const [updateOn, updateOff] = await interleaved(withCpu(on, update(on)), withCpu(off, update(off)));
    // Server-side apply: each client applies its own deployment (created by the first apply), a new replica count each time.
    let applied = 0;
    const apply = (server) => (client) => {
      const body = JSON.parse(deployment(`a-${client}`));
      body.spec.replicas = 1 + (applied++ % 5);
      return server.orch('PATCH', `${DEPLOYMENTS}/a-${client}?fieldManager=bench&fieldValidation=Strict`, JSON.stringify(body), 'application/apply-patch+yaml');
    };
    const [applyOn, applyOff] = await interleaved(withCpu(on, apply(on)), withCpu(off, apply(off)));
    const cpuRow = (name, a, b) => ({engine, name, rps: a.cpuPerRequest, ratio: a.cpuPerRequest / b.cpuPerRequest, against: `off ${b.cpuPerRequest.toFixed(0)} CPU-us/req`, note: 'CPU-us per request'});
    return [
      row(engine, 'create, validation on', createOn, 'validation off', createOff, 0.8),
      row(engine, 'update, validation on', updateOn, 'validation off', updateOff, 0.8),
      row(engine, 'apply, validation on', applyOn, 'validation off', applyOff, 0.8),
      // The server's CPU time per request (Linux /proc), which the shared machine's noise hardly moves.
      ...(createOn.cpuPerRequest ? [cpuRow('create CPU on/off', createOn, createOff), cpuRow('update CPU on/off', updateOn, updateOff), cpuRow('apply CPU on/off', applyOn, applyOff)] : []),
    ];
  } catch (error) {
    console.error(on.log(), off.log());
    throw error;
  } finally {
    await on.stop();
    await off.stop();
  }
}

/**
 * GET of one pod by a user RBAC allows (a token user bound to `view`), with 1,000 other roles and
 * bindings in the cluster, against the same GET on a server with AlwaysAllow, in the same run.
 */
async function benchRbac(engine, etcdEndpoint) {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-rbac-'));
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, 'bench-token,bench,1\n');
  const rbac = await startOrch(engine, etcdEndpoint, {}, ['--authorization-mode', 'RBAC', '--token-auth-file', tokenFile]);
  const open = await startOrch(engine, etcdEndpoint, {}, ['--authorization-mode', 'AlwaysAllow', '--token-auth-file', tokenFile]);
  try {
    const RBAC = '/apis/rbac.orch.io/v1/namespaces/default';
    const post = async (server, path, object) => {
      const r = await server.orch('POST', path, JSON.stringify(object), 'application/json');
      if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
    };
    for (let i = 0; i < 1000; i++) {
      await post(rbac, `${RBAC}/roles`, {apiVersion: 'rbac.orch.io/v1', kind: 'Role', metadata: {name: `r-${i}`}, rules: [{apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [`cm-${i}`]}]});
      await post(rbac, `${RBAC}/rolebindings`, {
        apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: `b-${i}`},
        roleRef: {apiGroup: 'rbac.orch.io', kind: 'Role', name: `r-${i}`}, subjects: [{apiGroup: 'rbac.orch.io', kind: 'User', name: `user-${i}`}],
      });
    }
    // The bench user's binding last, so a request walks the namespace's bindings before it is allowed.
    await post(rbac, `${RBAC}/rolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'RoleBinding', metadata: {name: 'zz-bench-view'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'}, subjects: [{apiGroup: 'rbac.orch.io', kind: 'User', name: 'bench'}],
    });
    const pod = JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p'}, spec: {containers: [{name: 'c', image: 'nginx:1.27'}]}});
    for (const server of [rbac, open]) await post(server, PODS, JSON.parse(pod));
    const asBench = {authorization: 'Bearer bench-token'};
    await waitUntil(async () => (await rbac.orch('GET', `${PODS}/p`, undefined, undefined, asBench)).status === 200, 'the bench user allowed', 20_000);
    const get = (server) => () => server.orch('GET', `${PODS}/p`, undefined, undefined, asBench);
    const [withRbac, withAlwaysAllow] = await interleaved(get(rbac), get(open));
    return [row(engine, 'GET pod, RBAC 1,000 roles', withRbac, 'AlwaysAllow', withAlwaysAllow, 0.85)];
  } finally {
    await rbac.stop();
    await open.stop();
    rmSync(dir, {recursive: true, force: true});
  }
}

/**
 * Auditing (case `audit`): GET and create rates of a server logging every request at Metadata level
 * to a file (blocking mode, the default), as ratios to a server without auditing. Target: >= 0.8x.
 */
async function benchAudit(engine, etcdEndpoint) {
  const policyArgs = (dataDir) => {
    // AUDIT_LEVEL (Metadata): the policy's one level; None measures what auditing costs before any event.
    writeFileSync(join(dataDir, 'policy.yaml'), `apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: ${process.env.AUDIT_LEVEL ?? 'Metadata'}\n`);
    return ['--audit-policy-file', join(dataDir, 'policy.yaml'), '--audit-log-path', join(dataDir, 'audit', 'audit.log'), ...(process.env.AUDIT_ARGS ?? '').split(' ').filter(Boolean)];
  };
  const on = await startOrch(engine, etcdEndpoint, {}, policyArgs);
  const off = await startOrch(engine, etcdEndpoint);
  try {
    const CM = '/api/v1/namespaces/default/configmaps';
    for (const server of [on, off]) {
      const r = await server.orch('POST', CM, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'read-me'}, data: {a: 'b'}}), 'application/json');
      if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
    }
    // With the servers' CPU per request: steadier than rates when the machine is shared.
    const get = (server) => withCpu(server, () => server.orch('GET', `${CM}/read-me`));
    const [getOn, getOff] = await interleaved(get(on), get(off));
    let n = 0;
    const create = (server) => withCpu(server, () => server.orch('POST', CM, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `c-${n++}`}, data: {a: 'b'}}), 'application/json'));
    const [createOn, createOff] = await interleaved(create(on), create(off));
    const cpuRow = (name, a, b) => ({engine, name, rps: a.cpuPerRequest, ratio: a.cpuPerRequest / b.cpuPerRequest, against: `no audit ${b.cpuPerRequest?.toFixed(0)} CPU-us/req`, note: 'CPU-us per request'});
    return [
      row(engine, 'GET, audit Metadata', getOn, 'no audit', getOff, 0.8),
      row(engine, 'create, audit Metadata', createOn, 'no audit', createOff, 0.8),
      ...(createOn.cpuPerRequest ? [cpuRow('  CPU, GET audit/none', getOn, getOff), cpuRow('  CPU, create audit/none', createOn, createOff)] : []),
    ];
  } finally {
    await on.stop();
    await off.stop();
  }
}

/**
 * Priority and fairness (case `apf`): a user's GETs and creates (classified, queued in global-default)
 * with priority and fairness on, as ratios to a server with it off (the max-in-flight filter). Target: >= 0.9x.
 */
async function benchApf(engine, etcdEndpoint) {
  const tokens = (dataDir) => {
    writeFileSync(join(dataDir, 'tokens.csv'), 'bench-token,bench-user,1\n');
    return ['--token-auth-file', join(dataDir, 'tokens.csv')];
  };
  const offArgs = (dataDir) => [...tokens(dataDir), '--enable-priority-and-fairness=false'];
  const on = await startOrch(engine, etcdEndpoint, {}, process.env.APF_NOISE_FLOOR ? offArgs : tokens);
  const off = await startOrch(engine, etcdEndpoint, {}, offArgs);
  try {
    const CM = '/api/v1/namespaces/default/configmaps';
    const asUser = {authorization: 'Bearer bench-token'};
    for (const server of [on, off]) {
      const r = await server.orch('POST', CM, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'read-me'}, data: {a: 'b'}}), 'application/json', asUser);
      if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
    }
    const get = (server) => () => server.orch('GET', `${CM}/read-me`, undefined, undefined, asUser);
    const [getOn, getOff] = await interleaved(get(on), get(off));
    let n = 0;
    const create = (server) => () => server.orch('POST', CM, JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `c-${n++}`}, data: {a: 'b'}}), 'application/json', asUser);
    const [createOn, createOff] = await interleaved(create(on), create(off));
    return [row(engine, 'GET, priority and fairness', getOn, 'max-in-flight', getOff, 0.9), row(engine, 'create, priority and fairness', createOn, 'max-in-flight', createOff, 0.9)];
  } finally {
    await on.stop();
    await off.stop();
  }
}

/**
 * Encryption at rest (case `encryption`): secret creates with aesgcm, secretbox and KMS v2 (a plugin
 * served by this process on a unix socket) on secrets, each against a server without, interleaved.
 * Target for aesgcm: >= 0.8x. KMS v2 encrypts locally with its DEK: no plugin call per write.
 */
async function benchEncryption(engine, etcdEndpoint, lib) {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-kms-'));
  const socket = join(dir, 'kms.sock');
  const plugin = await startKmsPlugin(lib, socket);
  const config = (provider) => (dataDir) => {
    writeFileSync(join(dataDir, 'enc.yaml'), `apiVersion: apiserver.config.orch.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - ${provider}\n      - identity: {}\n`);
    return ['--encryption-provider-config', join(dataDir, 'enc.yaml')];
  };
  const key = Buffer.alloc(32, 7).toString('base64');
  const servers = [
    ['aesgcm', await startOrch(engine, etcdEndpoint, {}, config(`aesgcm: {keys: [{name: k1, secret: ${key}}]}`)), 0.8],
    ['secretbox', await startOrch(engine, etcdEndpoint, {}, config(`secretbox: {keys: [{name: k1, secret: ${key}}]}`))],
    ['kms v2', await startOrch(engine, etcdEndpoint, {}, config(`kms: {apiVersion: v2, name: bench, endpoint: "unix://${socket}"}`))],
  ];
  const off = await startOrch(engine, etcdEndpoint);
  try {
    const SECRETS = '/api/v1/namespaces/default/secrets';
    let n = 0;
    const create = (server) => () => server.orch('POST', SECRETS, JSON.stringify({apiVersion: 'v1', kind: 'Secret', metadata: {name: `s-${n++}`}, data: {password: Buffer.from('hunter2').toString('base64')}}), 'application/json');
    const rows = [];
    // Each provider against its own interleaved baseline, with the servers' CPU per create (steadier
    // than rates when the machine is shared).
    for (const [name, server, target] of servers) {
      const [on, none] = await interleaved(withCpu(server, create(server)), withCpu(off, create(off)));
      rows.push(row(engine, `secret create, ${name}`, on, 'no encryption', none, target));
      rows.push({engine, name: `  CPU, ${name}`, rps: on.cpuPerRequest, ratio: on.cpuPerRequest / none.cpuPerRequest, against: `none ${none.cpuPerRequest?.toFixed(0)} CPU-us/req`, note: 'CPU-us per request'});
    }
    return rows;
  } finally {
    for (const [, server] of servers) await server.stop();
    await off.stop();
    plugin.forceShutdown();
    rmSync(dir, {recursive: true, force: true});
  }
}

/** A KMS v2 plugin on a unix socket: AES-256-GCM under one key id. */
async function startKmsPlugin(lib, socket) {
  const grpc = await import('@grpc/grpc-js');
  const {createCipheriv, createDecipheriv, randomBytes} = await import('node:crypto');
  const kek = randomBytes(32);
  const server = new grpc.Server();
  server.addService(lib.KMS_V2_SERVICE, {
    Status: (_call, callback) => callback(null, {version: 'v2', healthz: 'ok', key_id: 'bench-1'}),
    Encrypt: (call, callback) => {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', kek, nonce);
      callback(null, {ciphertext: Buffer.concat([nonce, cipher.update(call.request.plaintext), cipher.final(), cipher.getAuthTag()]), key_id: 'bench-1'});
    },
    Decrypt: (call, callback) => {
      const c = call.request.ciphertext;
      const decipher = createDecipheriv('aes-256-gcm', kek, c.subarray(0, 12));
      decipher.setAuthTag(c.subarray(c.length - 16));
      callback(null, {plaintext: Buffer.concat([decipher.update(c.subarray(12, c.length - 16)), decipher.final()])});
    },
  });
  await new Promise((resolve, reject) => server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())));
  return server;
}

/**
 * Storage media type (case `media`): pod creates and GETs (served from the watch cache, which holds
 * decoded objects) with --storage-media-type protobuf and yaml, against JSON, interleaved. It tells
 * whether protobuf may be the default: it is not when it is slower than JSON here.
 */
async function benchMediaType(engine, etcdEndpoint) {
  const json = await startOrch(engine, etcdEndpoint, {}, ['--storage-media-type', 'application/json']);
  const protobuf = await startOrch(engine, etcdEndpoint, {}, ['--storage-media-type', 'application/vnd.orch.protobuf']);
  const yaml = await startOrch(engine, etcdEndpoint, {}, ['--storage-media-type', 'application/yaml']);
  try {
    let n = 0;
    const pod = () => JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: `m-${n++}`, labels: {app: 'bench'}}, spec: {containers: [{name: 'app', image: 'nginx:1.27', ports: [{containerPort: 80}]}]}});
    const create = (server) => withCpu(server, () => server.orch('POST', PODS, pod(), 'application/json'));
    const [pb, ym, js] = await interleaved(create(protobuf), create(yaml), create(json));
    return [
      row(engine, 'pod create, protobuf', pb, 'json', js),
      {engine, name: '  CPU, protobuf', rps: pb.cpuPerRequest, ratio: pb.cpuPerRequest / js.cpuPerRequest, against: `json ${js.cpuPerRequest?.toFixed(0)} CPU-us/req`, note: 'CPU-us per request'},
      row(engine, 'pod create, yaml', ym, 'json', js),
    ];
  } finally {
    await json.stop();
    await protobuf.stop();
    await yaml.stop();
  }
}

/**
 * Admission (case `admission`): pod creates with the default plugin set, and with the default set plus
 * a validating webhook and a ValidatingAdmissionPolicy, against `--admission-control=` (no plugin).
 */
async function benchAdmission(engine, etcdEndpoint) {
  const none = await startOrch(engine, etcdEndpoint, {}, ['--admission-control=']);
  // ADMISSION_ARGS: extra options of the default-set server (e.g. `--disable-admission-plugins ResourceQuota`, to see one plugin's cost).
  const defaults = await startOrch(engine, etcdEndpoint, {}, (process.env.ADMISSION_ARGS ?? '').split(' ').filter(Boolean));
  const hooked = await startOrch(engine, etcdEndpoint);
  const webhook = await startAllowingWebhook();
  try {
    const inEffect = (server) => /"Admission plugins" plugins="([^"]*)"/.exec(server.log())?.[1]?.split(',') ?? [];
    const canHook = ['ValidatingAdmissionWebhook', 'ValidatingAdmissionPolicy'].every((p) => inEffect(hooked).includes(p));
    if (canHook) await installWebhookAndPolicy(hooked, webhook);
    let n = 0;
    const pod = () => JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: `a-${n++}`, labels: {app: 'bench'}}, spec: {containers: [{name: 'app', image: 'nginx:1.27'}]}});
    const create = (server) => () => server.orch('POST', PODS, pod(), 'application/json');
    const calls = [withCpu(none, create(none)), withCpu(defaults, create(defaults)), ...(canHook ? [withCpu(hooked, create(hooked))] : [])];
    const [createNone, createDefaults, createHooked] = await interleaved(...calls);
    // The servers' CPU time per create (Linux /proc), steadier than rates on a shared machine: cost with plugins / without.
    const cpuRow = (name, a, b) => ({engine, name, rps: a.cpuPerRequest, ratio: a.cpuPerRequest / b.cpuPerRequest, against: `none ${b.cpuPerRequest.toFixed(0)} CPU-us/req`, note: 'CPU-us per request'});
    const rows = [row(engine, 'pod create, default plugins', createDefaults, 'no admission plugin', createNone, 0.85)];
    if (createDefaults.cpuPerRequest) rows.push(cpuRow('create CPU default/none', createDefaults, createNone));
    if (createHooked) {
      rows.push(row(engine, 'pod create, webhook+policy', createHooked, 'no admission plugin', createNone, 0.5));
      if (createHooked.cpuPerRequest) rows.push(cpuRow('create CPU hooked/none', createHooked, createNone));
    } else rows.push({engine, name: 'pod create, webhook+policy', note: 'skipped: ValidatingAdmissionWebhook or ValidatingAdmissionPolicy not built yet'});
    return rows;
  } finally {
    await Promise.all([none.stop(), defaults.stop(), hooked.stop()]);
    await new Promise((resolve) => webhook.server.close(resolve));
    rmSync(webhook.dir, {recursive: true, force: true});
  }
}

/** A validating webhook on loopback over TLS (certificate made by openssl for 127.0.0.1) that allows every request. */
async function startAllowingWebhook() {
  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-webhook-'));
  const made = spawn('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], {stdio: 'ignore'});
  const code = await new Promise((resolve) => made.once('exit', resolve));
  if (code !== 0) throw new Error('openssl could not make the webhook certificate');
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  let calls = 0;
  const server = createHttpsServer({cert, key: readFileSync(join(dir, 'key.pem'), 'utf8')}, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      calls++;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({apiVersion: review.apiVersion, kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: true}}));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {server, dir, caBundle: Buffer.from(cert).toString('base64'), url: `https://127.0.0.1:${server.address().port}/validate`, calls: () => calls};
}

/** The webhook configuration and a policy with its binding, on pod creates; waits until both act. */
async function installWebhookAndPolicy(server, webhook) {
  const group = 'admissionregistration.orch.io';
  const rules = [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods']}];
  const post = async (path, body) => {
    const r = await server.orch('POST', `/apis/${group}/v1/${path}`, JSON.stringify({apiVersion: `${group}/v1`, ...body}), 'application/json');
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.body}`);
  };
  await post('validatingwebhookconfigurations', {
    kind: 'ValidatingWebhookConfiguration', metadata: {name: 'bench-allow'},
    webhooks: [{name: 'allow.bench.orch.io', rules, sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Fail', timeoutSeconds: 5,
      clientConfig: {url: webhook.url, caBundle: webhook.caBundle}}],
  });
  await post('validatingadmissionpolicies', {
    kind: 'ValidatingAdmissionPolicy', metadata: {name: 'bench-containers'},
    spec: {failurePolicy: 'Fail', matchConstraints: {resourceRules: rules}, validations: [{expression: 'object.spec.containers.size() < 10', message: 'too many containers'}]},
  });
  await post('validatingadmissionpolicybindings', {
    kind: 'ValidatingAdmissionPolicyBinding', metadata: {name: 'bench-containers'}, spec: {policyName: 'bench-containers', validationActions: ['Deny']},
  });
  // Both take effect through informers: wait until a pod with ten containers is refused (the policy
  // runs before the webhooks, as upstream orders them) and a plain dry-run pod reaches the webhook.
  const crowded = JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {generateName: 'crowded-'},
    spec: {containers: Array.from({length: 10}, (_, i) => ({name: `c${i}`, image: 'nginx:1.27'}))}});
  const plain = JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {generateName: 'plain-'}, spec: {containers: [{name: 'c', image: 'nginx:1.27'}]}});
  await waitUntil(async () => {
    if ((await server.orch('POST', PODS, crowded, 'application/json')).status < 400) return false;
    const before = webhook.calls();
    return (await server.orch('POST', `${PODS}?dryRun=All`, plain, 'application/json')).status === 201 && webhook.calls() > before;
  }, 'the webhook and the policy to act', 20_000);
}

/** The CPU time (user + system, microseconds) a process has used, from /proc; undefined elsewhere. */
function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/** Wraps a request function so each round also reports the server's CPU time per request. */
function withCpu(server, call) {
  const wrapped = (client) => call(client);
  wrapped.server = server;
  return wrapped;
}

/** Server-side apply rates as ratios to create, interleaved round by round. */
async function benchApply(engine, orch, podJson) {
  let created = 0;
  let applied = 0;
  let seq = 0;
  const renamed = (name, labels = {}) => {
    const pod = JSON.parse(podJson(0));
    pod.metadata.name = name;
    Object.assign(pod.metadata.labels, labels);
    return JSON.stringify(pod);
  };
  const APPLY = 'application/apply-patch+yaml';
  const [create, applyCreate, mergeUpdate, applyUpdate] = await interleaved(
    () => orch('POST', PODS, renamed(`create-${created++}`), 'application/json'),
    () => orch('PATCH', `${PODS}/apply-${applied}?fieldManager=bench`, renamed(`apply-${applied++}`), APPLY),
    (client) => orch('PATCH', `${PODS}/bench-${client}`, JSON.stringify({metadata: {labels: {seq: String(seq++)}}}), 'application/merge-patch+json'),
    (client) => orch('PATCH', `${PODS}/bench-${client}?fieldManager=bench&force=true`, renamed(`bench-${client}`, {n: String(client), seq: String(seq++)}), APPLY),
  );
  // The merge patches take the label over (their manager is the User-Agent), so the applies force, as
  // controllers do. An update reads and compares-and-swaps in the store, a create only inserts: the label-changing
  // apply is also shown against the same change made by a merge patch.
  return [
    row(engine, 'apply (creates a pod)', applyCreate, 'POST create', create),
    row(engine, 'apply (changes a label)', applyUpdate, 'POST create', create),
    row(engine, 'apply (changes a label)', applyUpdate, 'PATCH merge (same change)', mergeUpdate),
  ];
}

/**
 * The machine is shared and noisy: each figure is the median of ROUNDS short rounds, and orch and its
 * baseline alternate round by round, so a burst of noise hits both alike.
 */
async function interleaved(...calls) {
  const results = calls.map(() => []);
  for (let i = 0; i < ROUNDS; i++) {
    for (const [n, call] of calls.entries()) {
      const before = call.server && cpuMicros(call.server.pid);
      const measured = await load(CLIENTS, call);
      const after = call.server && cpuMicros(call.server.pid);
      if (before !== undefined && after !== undefined) measured.cpuPerRequest = (after - before) / measured.total;
      results[n].push(measured);
    }
  }
  return results.map((r) => {
    const chosen = median(r);
    // CPU per request: the median over rounds on its own (it does not go with the rate's round).
    if (r[0]?.cpuPerRequest !== undefined) chosen.cpuPerRequest = [...r.map((x) => x.cpuPerRequest)].sort((a, b) => a - b)[Math.floor(r.length / 2)];
    return chosen;
  });
}

async function rounds(measure) {
  const results = [];
  for (let i = 0; i < ROUNDS; i++) results.push(await measure());
  return results;
}

/** The round with the median rate (its p99 goes with it). */
function median(results) {
  return [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)];
}

/** Runs `clients` loops of `call(clientIndex)` for `seconds` (after a short warm-up); requests/s and p99 ms. */
async function load(clients, call, seconds = ROUND_SECONDS) {
  const warmUntil = Date.now() + 300;
  const endAt = warmUntil + seconds * 1000;
  const latencies = [];
  let errors = 0;
  let total = 0;
  await Promise.all(
    Array.from({length: clients}, async (_, client) => {
      while (Date.now() < endAt) {
        const start = performance.now();
        const r = await call(client);
        total++;
        const ms = performance.now() - start;
        if (r.status < 200 || r.status >= 300) errors++;
        if (Date.now() > warmUntil) latencies.push(ms);
      }
    }),
  );
  if (errors) throw new Error(`${errors} requests failed`);
  latencies.sort((a, b) => a - b);
  return {rps: latencies.length / seconds, p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))], n: latencies.length, total};
}

function row(engine, name, measured, againstName, against, target) {
  const ratio = against ? measured.rps / against.rps : undefined;
  return {engine, name, rps: measured.rps, p99: measured.p99, ratio, against: againstName, target, ok: target === undefined ? undefined : ratio >= target, baseP99: against?.p99, baseRps: against?.rps};
}

function printTable(rows) {
  const pad = (s, n) => String(s).padEnd(n);
  const num = (x, d = 0) => (x === undefined ? '' : x.toFixed(d));
  console.log(`\n${pad('engine', 7)} ${pad('case', 26)} ${pad('req/s', 9)} ${pad('p99 ms', 8)} ${pad('baseline', 30)} ratio`);
  for (const r of rows) {
    const base = r.against ? `${r.against}${r.baseRps ? ` ${num(r.baseRps)}/s p99 ${num(r.baseP99, 1)}` : ''}` : r.note ?? '';
    const verdict = r.target === undefined ? '' : r.ok ? ` ok (target >= ${r.target}x)` : ` UNDER target ${r.target}x`;
    console.log(`${pad(r.engine, 7)} ${pad(r.name, 26)} ${pad(num(r.rps), 9)} ${pad(num(r.p99, 1), 8)} ${pad(base, 30)} ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x`}${verdict}`);
  }
}

function send(agent, base, method, path, body, contentType, extraHeaders = {}) {
  return new Promise((resolve, reject) => {
    const headers = {accept: 'application/json', ...extraHeaders};
    if (body !== undefined) headers['content-type'] = contentType ?? 'application/json';
    const req = request(new URL(path, base), {method, agent, headers, timeout: 30_000}, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({status: res.statusCode, body: Buffer.concat(chunks).toString('utf8')}));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function waitForOrchconfig(path, child, log) {
  await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`orch apiserver exited:\n${log()}`);
    return existsSync(path);
  }, 'the admin orchconfig', 20_000);
  const config = parseYaml(readFileSync(path, 'utf8'));
  const b64 = (s) => Buffer.from(s, 'base64');
  return {
    server: config.clusters[0].cluster.server,
    ca: b64(config.clusters[0].cluster['certificate-authority-data']),
    cert: b64(config.users[0].user['client-certificate-data']),
    key: b64(config.users[0].user['client-key-data']),
  };
}

async function waitUntil(check, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      if (/exited/.test(error.message)) throw error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}
