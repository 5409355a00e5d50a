// The reference for port-forward throughput (bench/agent-streams.mjs): the same bytes over the same
// hops as `kubectl port-forward` through `orch up`, with nothing but Node's own TLS byte pipes, no
// protocol at all. What this costs is what any Node API server and agent of this design pay at least:
//   reader -> client (kubectl's part: local TCP in, TLS out)
//          -> relay process (the API server's part: TLS server, TLS client to the agent's part;
//             the agent's part: TLS server that dials the pod's port) -> pod's TCP port.
// The relay process runs both TLS hops on one thread, as `orch up` runs the API server and the agent.
// Run as a script: `node reference-relay.mjs relay POD_PORT CERT_DIR` or `... client RELAY_PORT CERT_DIR`
// prints {"port": N} once it listens; CERT_DIR holds ca.crt, apiserver.crt and apiserver.key (a serving
// certificate for 127.0.0.1, as `orch up` writes them).
import {spawn} from 'node:child_process';
import {readFileSync} from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';

/** Copies both ways with pipe; an error or a cut on one side destroys the other, an end ends it. */
function splice(a, b) {
  a.pipe(b);
  b.pipe(a);
  for (const [x, y] of [[a, b], [b, a]]) {
    x.on('error', () => y.destroy());
    x.on('close', () => {
      if (!x.readableEnded) y.destroy();
    });
  }
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

async function main([role, port, certDir]) {
  const ca = readFileSync(join(certDir, 'ca.crt'));
  const cert = readFileSync(join(certDir, 'apiserver.crt'));
  const key = readFileSync(join(certDir, 'apiserver.key'));
  const dial = (to) => tls.connect({host: '127.0.0.1', port: to, ca, ALPNProtocols: ['http/1.1']});
  // The suite orch's servers settle on (Go's order: AES-128-GCM first), so that both sides pay the same AES.
  const ciphers = ['TLS_AES_128_GCM_SHA256', ...tls.DEFAULT_CIPHERS.split(':').filter((c) => c !== 'TLS_AES_128_GCM_SHA256')].join(':');
  let listening;
  if (role === 'relay') {
    const agent = await listen(tls.createServer({cert, key, ciphers}, (s) => splice(s, net.connect({host: '127.0.0.1', port: Number(port)}))));
    listening = await listen(tls.createServer({cert, key, ciphers}, (s) => splice(s, dial(agent))));
  } else {
    listening = await listen(net.createServer((s) => splice(s, dial(Number(port)))));
  }
  console.log(JSON.stringify({port: listening}));
}

/** Starts the relay and client processes; resolves with the client's local port and both processes. */
export async function startReferenceRelay(podPort, certDir) {
  const script = fileURLToPath(import.meta.url);
  const start = (args) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [script, ...args.map(String)], {stdio: ['ignore', 'pipe', 'inherit']});
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`reference ${args[0]} exited with ${code}`)));
      child.stdout.once('data', (d) => resolve({child, port: JSON.parse(d).port}));
    });
  const relay = await start(['relay', podPort, certDir]);
  const client = await start(['client', relay.port, certDir]).catch((e) => {
    relay.child.kill();
    throw e;
  });
  return {
    port: client.port,
    relayPid: relay.child.pid,
    clientPid: client.child.pid,
    stop() {
      for (const {child} of [relay, client]) {
        child.removeAllListeners('exit');
        child.kill();
      }
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
