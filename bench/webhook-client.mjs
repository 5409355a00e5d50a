// CPU cost of one admission webhook call on the API server's side, per HTTP client: N AdmissionReview
// POSTs of a pod (CONCURRENCY in flight, as many as the apiserver bench's clients) to a loopback TLS
// webhook that allows everything, run in a child process so that only the caller's CPU is counted
// (process.cpuUsage of this process over the calls). Each candidate is measured ROUNDS times,
// interleaved, and reported as the median µs of CPU per call and as a ratio to `current` (the
// project's WebhookClient, bundled from src/ with esbuild) measured in the same run.
// Candidates:
// - current: src/daemons/apiserver/admission/plugins/webhook/client.ts (undici pools through their
//   handler interface, webhook-pools.ts; it used node:https with a keep-alive agent before).
// - undici: an undici Pool per endpoint with pool.request() (a stream per answer, parsed headers).
// - https: node:https with nothing but the call (the floor of tuning the current client).
// - http2: one node:http2 session per endpoint (Go's API server speaks HTTP/2 to webhooks).
// Environment: CALLS (4000), CONCURRENCY (32), ROUNDS (3), CANDIDATES (current,undici,http2).
import {spawn, fork} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {connect as connectHttp2, createSecureServer} from 'node:http2';
import {Agent as HttpsAgent, request as httpsRequest} from 'node:https';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {build} from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// --- the webhook, as a child process: `node bench/webhook-client.mjs server <dir>` ---
if (process.argv[2] === 'server') {
  const dir = process.argv[3];
  // HTTP/1.1 and HTTP/2 on one port, so every candidate talks to the same server.
  const server = createSecureServer({cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')), allowHTTP1: true}, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({apiVersion: review.apiVersion, kind: 'AdmissionReview', response: {uid: review.request.uid, allowed: true}}));
    });
  });
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
  process.on('disconnect', () => process.exit(0));
} else {
  await main();
}

async function main() {
  const CALLS = Number(process.env.CALLS ?? 4000);
  const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
  const ROUNDS = Number(process.env.ROUNDS ?? 3);
  const wanted = (process.env.CANDIDATES ?? 'current,https,undici,http2').split(',');

  const dir = mkdtempSync(join(tmpdir(), 'orch-bench-webhook-client-'));
  const made = spawn('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], {stdio: 'ignore'});
  if ((await new Promise((resolve) => made.once('exit', resolve))) !== 0) throw new Error('openssl could not make the webhook certificate');
  const certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
  const child = fork(fileURLToPath(import.meta.url), ['server', dir], {stdio: 'inherit'});
  const port = await new Promise((resolve) => child.once('message', resolve));
  const url = `https://127.0.0.1:${port}/validate`;
  const hook = {name: 'allow.bench.orch.io', timeoutSeconds: 5, clientConfig: {url, caBundle: Buffer.from(certPem).toString('base64')}};

  const out = join(dir, 'bundle');
  await build({
    entryPoints: {client: join(root, 'src/daemons/apiserver/admission/plugins/webhook/client.ts')},
    bundle: true, format: 'esm', platform: 'node', target: 'node20', outdir: out, logLevel: 'error',
    banner: {js: "import {createRequire as __cr} from 'node:module'; const require = __cr(import.meta.url);"},
  });
  const {WebhookClient} = await import(pathToFileURL(join(out, 'client.js')).href);

  const candidates = {};
  candidates.current = () => {
    const client = new WebhookClient(() => ({}), async () => { throw new Error('no services here'); });
    return {call: (review) => client.call(hook, review), close: () => client.close()};
  };
  let undici;
  try {
    undici = await import('undici');
  } catch {
    undici = undefined;
  }
  if (undici) candidates.undici = () => {
    const pool = new undici.Pool(`https://127.0.0.1:${port}`, {connect: {ca: certPem, servername: undefined}, keepAliveTimeout: 4000});
    const path = '/validate?timeout=5s';
    return {
      async call(review) {
        const body = JSON.stringify(review);
        const res = await pool.request({path, method: 'POST', body, headersTimeout: 5000, bodyTimeout: 5000,
          headers: {'content-type': 'application/json', accept: 'application/json', 'user-agent': 'orch-apiserver-admission'}});
        return JSON.parse(await res.body.text());
      },
      close: () => pool.destroy(),
    };
  };
  // (c): node:https as lean as it gets (one keep-alive agent, headers built once), the most a tuned
  // node:https client could save.
  candidates.https = () => {
    const agent = new HttpsAgent({keepAlive: true, timeout: 4000});
    const base = {method: 'POST', host: '127.0.0.1', port, path: '/validate?timeout=5s', ca: certPem, agent};
    return {
      call: (review) => new Promise((resolve, reject) => {
        const body = JSON.stringify(review);
        const req = httpsRequest({...base, headers: {'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'orch-apiserver-admission'}}, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        });
        req.on('error', reject);
        req.end(body);
      }),
      close: () => agent.destroy(),
    };
  };
  candidates.http2 = () => {
    const session = connectHttp2(`https://127.0.0.1:${port}`, {ca: certPem});
    const path = '/validate?timeout=5s';
    return {
      call: (review) => new Promise((resolve, reject) => {
        const body = JSON.stringify(review);
        const req = session.request({':method': 'POST', ':path': path, 'content-type': 'application/json', accept: 'application/json',
          'content-length': Buffer.byteLength(body), 'user-agent': 'orch-apiserver-admission'});
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        req.on('error', reject);
        req.end(body);
      }),
      close: () => session.close(),
    };
  };

  const pod = JSON.parse(readFileSync(join(root, 'bench/fixtures/webhook-review.json'), 'utf8'));
  const review = (i) => ({...pod, request: {...pod.request, uid: `uid-${i}`}});

  /** CPU µs per call of one candidate over CALLS calls, after a warm-up that opens its connections. */
  async function measure(name) {
    const client = candidates[name]();
    try {
      const run = async (calls) => {
        let next = 0;
        await Promise.all(Array.from({length: CONCURRENCY}, async () => {
          while (next < calls) {
            const answer = await client.call(review(next++));
            if (answer?.response?.allowed !== true) throw new Error(`${name}: unexpected answer ${JSON.stringify(answer)}`);
          }
        }));
      };
      await run(CONCURRENCY * 4);
      const start = process.cpuUsage();
      const wall = performance.now();
      await run(CALLS);
      const used = process.cpuUsage(start);
      return {cpu: (used.user + used.system) / CALLS, wall: (performance.now() - wall) * 1000 / CALLS};
    } finally {
      client.close();
    }
  }

  const names = wanted.filter((n) => candidates[n]);
  const figures = Object.fromEntries(names.map((n) => [n, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) for (const name of names) figures[name].push(await measure(name));
  } finally {
    child.disconnect();
    rmSync(dir, {recursive: true, force: true});
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(figures.current?.map((f) => f.cpu) ?? [NaN]);
  console.log(`webhook client: ${CALLS} calls x ${ROUNDS} rounds, ${CONCURRENCY} in flight (median of rounds)`);
  for (const name of names) {
    const cpu = median(figures[name].map((f) => f.cpu));
    const wall = median(figures[name].map((f) => f.wall));
    console.log(`${name.padEnd(8)} cpu/call ${cpu.toFixed(0).padStart(5)} µs  wall/call ${wall.toFixed(0).padStart(5)} µs  cpu vs current ${(cpu / base).toFixed(2)}x  rounds ${figures[name].map((f) => f.cpu.toFixed(0)).join(' ')}`);
  }
}
