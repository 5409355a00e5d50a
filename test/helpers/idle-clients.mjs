// Connections that cost the server without asking much of it, from their own process:
// - idle: TLS handshakes, then nothing (the read-header timeout should close them);
// - slow headers: a request head sent one byte a second, never finished (the headers timeout);
// - slow watchers: a watch whose response is never read (the server must not buffer it without bound).
// Prints one JSON line when every connection is open ({"ready": {...}}), then, after `durationMs`,
// one with what happened: for each kind, how many the server closed and after how long (ms).
// Usage: node test/helpers/idle-clients.mjs '<json: {orchconfig, idle, slowHeaders, slowWatchers, durationMs, namespace}>'
import {connect} from 'node:tls';
import {credentialsOf} from './traffic-load.mjs';

const options = JSON.parse(process.argv[2]);
const creds = credentialsOf(options.orchconfig);
const url = new URL(creds.server);
const kinds = {idle: [], slowHeaders: [], slowWatchers: []};
const timers = [];
/** Connections that never opened, by error (reported with the ready line). */
const failedToOpen = {};

function open(kind) {
  return new Promise((resolve) => {
    const entry = {openedAt: 0, closedAfterMs: undefined};
    const socket = connect({host: url.hostname, port: Number(url.port), ca: creds.ca, cert: creds.cert, key: creds.key, ALPNProtocols: ['http/1.1']}, () => {
      entry.openedAt = Date.now();
      resolve(socket);
    });
    socket.on('error', (error) => {
      if (!entry.openedAt) failedToOpen[error.code ?? error.message] = (failedToOpen[error.code ?? error.message] ?? 0) + 1;
    });
    // Flowing, so that the server's FIN is seen (a stream nobody reads never emits 'end');
    // slow watchers pause it again to stop reading.
    socket.resume();
    socket.on('close', () => {
      if (entry.openedAt) entry.closedAfterMs = Date.now() - entry.openedAt;
      else resolve(undefined);
    });
    entry.socket = socket;
    kinds[kind].push(entry);
  });
}

// Handshakes at once: each waits for the server to finish the others, and a handshake not done
// within the server's read-header timeout is cut (Go bounds the handshake by it too). 100 at once
// took up to 2.6 s on a busy machine, close enough to the tests' 6 s timeout that a connection
// sometimes never opened; the connections are the same, opened in smaller batches.
const BATCH = options.batch ?? 20;

async function openMany(kind, count, then) {
  for (let i = 0; i < count; i += BATCH) {
    const batch = await Promise.all(Array.from({length: Math.min(BATCH, count - i)}, () => open(kind)));
    for (const socket of batch) if (socket) then?.(socket);
  }
}

await openMany('idle', options.idle ?? 0);
await openMany('slowHeaders', options.slowHeaders ?? 0, (socket) => {
  const head = Buffer.from(`GET /api/v1/namespaces/${options.namespace ?? 'default'}/configmaps HTTP/1.1\r\nhost: localhost\r\nx-slow: ${'y'.repeat(100)}`);
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || at >= head.length) return clearInterval(timer);
    socket.write(head.subarray(at, ++at));
  }, 1000);
  timers.push(timer);
});
await openMany('slowWatchers', options.slowWatchers ?? 0, (socket) => {
  socket.write(`GET /api/v1/namespaces/${options.namespace ?? 'default'}/configmaps?watch=1&resourceVersion=0 HTTP/1.1\r\nhost: localhost\r\naccept: application/json\r\n\r\n`);
  // Never read: the socket stays paused, so the server's writes back up.
  socket.pause();
});
const counts = Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, v.filter((e) => e.openedAt).length]));
const stillOpen = Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, v.filter((e) => e.openedAt && e.closedAfterMs === undefined).length]));
process.stdout.write(JSON.stringify({ready: counts, stillOpen, failedToOpen}) + '\n');

await new Promise((resolve) => setTimeout(resolve, options.durationMs));
const report = {};
for (const [kind, entries] of Object.entries(kinds)) {
  const closed = entries.filter((e) => e.closedAfterMs !== undefined).map((e) => e.closedAfterMs).sort((a, b) => a - b);
  const open = entries.filter((e) => e.openedAt && e.closedAfterMs === undefined);
  report[kind] = {
    opened: entries.filter((e) => e.openedAt).length,
    closed: closed.length,
    minClosedAfterMs: closed[0] ?? null,
    maxClosedAfterMs: closed.at(-1) ?? null,
    // For a failure message: how long the ones still open have been open, and what they received.
    stillOpenForMs: open.slice(0, 5).map((e) => Date.now() - e.openedAt),
    stillOpenState: open.slice(0, 5).map((e) => ({readable: e.socket.readable, writable: e.socket.writable, received: e.socket.bytesRead})),
  };
}
process.stdout.write(JSON.stringify({report}) + '\n');
for (const timer of timers) clearInterval(timer);
for (const entries of Object.values(kinds)) for (const e of entries) e.socket.destroy();
process.exit(0);
