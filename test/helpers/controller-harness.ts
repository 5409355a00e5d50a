/**
 * What controller tests share: a real REST API (startTestApi over an in-memory store), a REST
 * client and shared informers on it, a controller started with a ControllerContext, and teardown
 * that stops the controller before the API goes away. `useControllerHarness()` installs it as
 * beforeEach/afterEach of the calling test file or describe block.
 */
import {afterEach, beforeEach} from '@jest/globals';
import type {Logger} from '../../src/lib/klog.js';
import {RestClient} from '../../src/client/rest-client.js';
import {clientListWatcher, noopMetricsProvider, SharedInformerFactory, type SharedInformerFactoryOptions} from '../../src/client/informers/index.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from '../../src/daemons/controller-manager/controllers/types.js';
import {startTestApi, type TestApi} from './memory-store.js';

export const quietLogger: Logger = {info() {}, warning() {}, error() {}, v: () => ({enabled: false, info() {}})};

/** Polls `probe` until it returns a truthy value (returned), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false | null>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ControllerHarness {
  readonly api: TestApi;
  readonly client: RestClient;
  readonly factory: SharedInformerFactory;
  readonly signal: AbortSignal;
  /** The controller started last (stopped in afterEach). */
  readonly running: RunningController | undefined;
  context(options?: Record<string, unknown>): ControllerContext;
  /** Aborts the controller's signal (the controller should stop). */
  abort(): void;
  /** Swaps the informer factory for one built on another ListWatcher (e.g. a lagging watch). */
  replaceListWatcher(listWatcherFor: SharedInformerFactoryOptions['listWatcherFor']): Promise<void>;
  start(controller: Pick<ControllerDescriptor, 'start'>, options?: Record<string, unknown>): Promise<RunningController>;
}

export function useControllerHarness(): ControllerHarness {
  let api: TestApi;
  let client: RestClient;
  let factory: SharedInformerFactory;
  let stop: AbortController;
  let running: RunningController | undefined;

  beforeEach(async () => {
    api = await startTestApi();
    client = new RestClient({config: {server: api.url, insecure: false}});
    factory = new SharedInformerFactory({listWatcherFor: (_ref, path) => clientListWatcher(client, path)});
    stop = new AbortController();
    running = undefined;
  });

  afterEach(async () => {
    stop.abort();
    await running?.done;
    await factory.shutdown();
    client.close();
    await api.close();
  });

  const harness: ControllerHarness = {
    get api() {
      return api;
    },
    get client() {
      return client;
    },
    get factory() {
      return factory;
    },
    get signal() {
      return stop.signal;
    },
    get running() {
      return running;
    },
    abort: () => stop.abort(),
    async replaceListWatcher(listWatcherFor) {
      await factory.shutdown();
      factory = new SharedInformerFactory({listWatcherFor});
    },
    context: (options = {}) => ({client, informers: factory, options, metrics: noopMetricsProvider, logger: quietLogger, now: () => Date.now()}),
    async start(controller, options = {}) {
      running = await controller.start(harness.context(options), stop.signal);
      return running;
    },
  };
  return harness;
}
