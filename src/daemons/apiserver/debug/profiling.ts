/**
 * Profiling of the API server's Node process at upstream's /debug/pprof/ paths (--profiling,
 * --contention-profiling, and the unprotected --debug-socket-path). Go's pprof formats do not exist
 * for V8, so each path answers in the format Node's own tools read:
 *
 * - `profile?seconds=N` (default 30, as Go): a CPU profile taken with node:inspector's Profiler for N
 *   seconds, as a `.cpuprofile` JSON document (Chrome DevTools, VS Code, speedscope open it).
 * - `heap` (`?gc=1` collects garbage first, as Go): V8's sampling heap profile of the objects still
 *   alive, as a `.heapprofile` JSON document. Sampling starts with the server at Go's MemProfileRate
 *   (one sample per 512 KiB allocated), so the profile covers the whole life of the process, as Go's.
 * - `block`: only with --contention-profiling. A Node process has no lock contention to sample; what
 *   blocks its requests is a busy event loop, so the nearest honest equivalent is the event loop's
 *   delay histogram (perf_hooks.monitorEventLoopDelay, 10 ms resolution) since the start, as JSON
 *   in milliseconds. Off, the path says why it is empty with a 404.
 * - `cmdline`: the process's command line, NUL-separated, as Go's.
 * - the index page, and /debug/flags/v (PUT a number: the klog verbosity, upstream's DebugFlags).
 */
import {Session} from 'node:inspector';
import {monitorEventLoopDelay, type IntervalHistogram} from 'node:perf_hooks';
import type {IncomingMessage, ServerResponse} from 'node:http';
import {configureKlog} from '../../../lib/klog.js';

/** Go's runtime.MemProfileRate default: one heap sample per 512 KiB allocated. */
const HEAP_SAMPLING_INTERVAL = 512 * 1024;
const DEFAULT_PROFILE_SECONDS = 30;

export const PPROF_PREFIX = '/debug/pprof';
export const FLAGS_V_PATH = '/debug/flags/v';

type Response = Pick<ServerResponse, 'writeHead' | 'end' | 'headersSent'> & {on(event: 'close', l: () => void): unknown};

export interface Profiling {
  /** Whether `path` is one of the paths this serves (/debug/pprof, /debug/pprof/..., /debug/flags/v). */
  serves(path: string): boolean;
  /** Answers a request for one of those paths. */
  handle(req: Pick<IncomingMessage, 'method' | 'url'> & AsyncIterable<Buffer>, res: Response): Promise<void>;
  stop(): void;
}

export function isDebugPath(path: string): boolean {
  return path === PPROF_PREFIX || path.startsWith(`${PPROF_PREFIX}/`) || path === FLAGS_V_PATH;
}

/** The profilers, started now: a heap sampler, and with `contention` the event loop delay histogram. */
export function createProfiling(options: {contention: boolean; argv?: readonly string[]}): Profiling {
  const session = new Session();
  session.connect();
  const post = <T = unknown>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T))));
  const ready = post('HeapProfiler.enable').then(() => post('HeapProfiler.startSampling', {samplingInterval: HEAP_SAMPLING_INTERVAL}));
  ready.catch(() => undefined);
  let histogram: IntervalHistogram | undefined;
  if (options.contention) {
    histogram = monitorEventLoopDelay({resolution: 10});
    histogram.enable();
  }
  let cpuBusy = false;
  const argv = options.argv ?? process.argv;

  const send = (res: Response, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
    if (res.headersSent) return;
    res.writeHead(status, {'Content-Type': type, 'X-Content-Type-Options': 'nosniff', ...extra});
    res.end(body);
  };
  const text = (res: Response, status: number, body: string) => send(res, status, 'text/plain; charset=utf-8', body);
  const json = (res: Response, body: unknown, file: string) =>
    send(res, 200, 'application/json', JSON.stringify(body), {'Content-Disposition': `attachment; filename="${file}"`});

  const cpuProfile = async (seconds: number, res: Response) => {
    if (cpuBusy) return text(res, 500, 'Could not enable CPU profiling: cpu profiling already in use\n');
    cpuBusy = true;
    let aborted = false;
    res.on('close', () => (aborted = true));
    try {
      await post('Profiler.enable');
      await post('Profiler.start');
      const end = Date.now() + seconds * 1000;
      while (!aborted && Date.now() < end) await new Promise((r) => setTimeout(r, Math.min(200, end - Date.now())));
      const {profile} = await post<{profile: unknown}>('Profiler.stop');
      await post('Profiler.disable');
      if (!aborted) json(res, profile, 'profile.cpuprofile');
    } finally {
      cpuBusy = false;
    }
  };

  const heap = async (gc: boolean, res: Response) => {
    await ready;
    if (gc) await post('HeapProfiler.collectGarbage');
    const {profile} = await post<{profile: unknown}>('HeapProfiler.getSamplingProfile');
    json(res, profile, 'heap.heapprofile');
  };

  const block = (res: Response) => {
    if (!histogram) return text(res, 404, 'contention profiling is off: start the server with --contention-profiling to record event loop delays\n');
    const ms = (ns: number) => ns / 1e6;
    json(
      res,
      {
        kind: 'EventLoopDelay',
        unit: 'ms',
        resolutionMs: 10,
        samples: histogram.count,
        min: ms(histogram.min),
        max: ms(histogram.max),
        mean: ms(histogram.mean),
        stddev: ms(histogram.stddev),
        percentiles: Object.fromEntries([50, 90, 99, 99.9].map((p) => [String(p), ms(histogram!.percentile(p))])),
      },
      'block.json',
    );
  };

  const index = (res: Response) => {
    const rows: [string, string][] = [
      ['profile?seconds=30', 'CPU profile of the Node process for the given seconds (.cpuprofile JSON, node:inspector Profiler).'],
      ['heap', 'Sampling heap profile of live objects since the start, one sample per 512 KiB (.heapprofile JSON); ?gc=1 collects garbage first.'],
      ...(histogram ? [['block', 'Event loop delay histogram since the start, in ms (--contention-profiling: what blocks a Node server).'] as [string, string]] : []),
      ['cmdline', 'The command line of the process, NUL-separated.'],
    ];
    const body =
      '<html>\n<head>\n<title>/debug/pprof/</title>\n</head>\n<body>\n/debug/pprof/<br>\n<br>\nProfiles of the Node process:<br>\n<table>\n' +
      rows.map(([href, what]) => `<tr><td><a href="${href}">${href.split('?')[0]}</a></td><td>${what}</td></tr>\n`).join('') +
      '</table>\n</body>\n</html>\n';
    send(res, 200, 'text/html; charset=utf-8', body);
  };

  const setVerbosity = async (req: AsyncIterable<Buffer> & {method?: string}, res: Response) => {
    if (req.method !== 'PUT') return text(res, 405, 'PUT is the only method allowed\n');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk);
    const raw = Buffer.concat(chunks).toString('utf8').trim();
    if (!/^\d+$/.test(raw)) return text(res, 400, `error: failed set klog.logging.verbosity: ${JSON.stringify(raw)} is not a non-negative integer\n`);
    configureKlog({verbosity: Number(raw)});
    text(res, 200, `successfully set klog.logging.verbosity to ${raw}\n`);
  };

  return {
    serves: isDebugPath,
    async handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://local');
      const path = url.pathname;
      if (path === FLAGS_V_PATH) return setVerbosity(req, res);
      if (path === PPROF_PREFIX) {
        res.writeHead(301, {Location: `${PPROF_PREFIX}/`});
        return void res.end();
      }
      const name = path.slice(PPROF_PREFIX.length + 1);
      if (name === '') return index(res);
      if (name === 'profile') {
        const seconds = Number.parseInt(url.searchParams.get('seconds') ?? '', 10);
        return cpuProfile(Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_PROFILE_SECONDS, res);
      }
      if (name === 'heap') return heap(['1', 'true'].includes(url.searchParams.get('gc') ?? ''), res);
      if (name === 'block' || name === 'mutex') return block(res);
      if (name === 'cmdline') return text(res, 200, argv.join('\x00'));
      // Go's pprof answers an unknown profile name with 404 "Unknown profile".
      return text(res, 404, 'Unknown profile\n');
    },
    stop() {
      histogram?.disable();
      session.disconnect();
    },
  };
}
