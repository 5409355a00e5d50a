// A flood of real requests from its own process (so the flooding client's TLS and body reading do
// not share the server's event loop with the test): `concurrency` loops GET `path` with a bearer
// token until `durationMs` passes or SIGUSR2 comes, reading and discarding each body. Prints the JSON result
// ({requests, codes}) on stdout.
//
// CLI: node test/helpers/apf-flood.mjs '<json options: server, ca, token, path, concurrency, durationMs>'
import {Agent, request as httpsRequest} from 'node:https';

const options = JSON.parse(process.argv[2]);
const agent = new Agent({keepAlive: true, ca: options.ca, maxSockets: options.concurrency});
const deadline = Date.now() + options.durationMs;
const codes = {};
let requests = 0;
let stopping = false;
process.on('SIGUSR2', () => (stopping = true));

function once() {
  return new Promise((resolve) => {
    const req = httpsRequest(new URL(options.path, options.server), {method: 'GET', agent, headers: {authorization: `Bearer ${options.token}`, accept: 'application/json'}}, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => {
        codes[res.statusCode] = (codes[res.statusCode] ?? 0) + 1;
        requests++;
        resolve();
      });
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
}

async function loop() {
  while (!stopping && Date.now() < deadline) await once();
}

await Promise.all(Array.from({length: options.concurrency}, loop));
agent.destroy();
process.stdout.write(JSON.stringify({requests, codes}));
