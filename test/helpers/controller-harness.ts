/**
 * What controller tests share: a real REST API (startTestApi over an in-memory store), a REST
 * client and shared informers on it, controllers started with a ControllerContext, and teardown
 * that stops the controllers before the API goes away. `useControllerHarness()` installs it as
 * beforeEach/afterEach of the calling test file or describe block.
 */
import {afterEach, beforeEach} from '@jest/globals';
import type {Logger} from '../../src/lib/klog.js';
import {RestClient} from '../../src/client/rest-client.js';
import {EventRecorder} from '../../src/client/event-recorder.js';
import {clientListWatcher, noopMetricsProvider, SharedInformerFactory, type SharedInformerFactoryOptions} from '../../src/client/informers/index.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from '../../src/daemons/controller-manager/controllers/types.js';
import {startTestApi, type TestApi} from './memory-store.js';

export const quietLogger: Logger = {info() {}, warning() {}, error() {}, v: () => ({enabled: false, info() {}})};

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const POLL_INTERVAL_MS = 20;

/**
 * Reads until `accept` holds or `timeoutMs` has passed, and returns the last value read even when
 * it was not accepted: the caller's assertion on it then shows what was there instead of a timeout.
 */
export async function pollUntil<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value) && Date.now() <= deadline) {
    await pause(POLL_INTERVAL_MS);
    value = await read();
  }
  return value;
}

/** Polls `probe` until it returns a truthy value (returned), or fails after `timeoutMs` naming `what`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false | null>, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const value = await pollUntil(probe, Boolean, timeoutMs);
  if (!value) throw new Error(`${what} not met within ${timeoutMs}ms`);
  return value;
}

export interface ControllerHarnessSetup {
  /** The logger of every controller context (default: quietLogger). */
  logger?: Logger;
}

export interface ControllerHarness {
  readonly api: TestApi;
  readonly client: RestClient;
  readonly factory: SharedInformerFactory;
  readonly signal: AbortSignal;
  /** The controller started last (every started one is stopped in afterEach). */
  readonly running: RunningController | undefined;
  context(options?: Record<string, unknown>): ControllerContext;
  /** Aborts the controllers' signal (the controllers should stop). */
  abort(): void;
  /** Swaps the informer factory for one built on another ListWatcher (e.g. a lagging watch). */
  replaceListWatcher(listWatcherFor: SharedInformerFactoryOptions['listWatcherFor']): Promise<void>;
  /**
   * Starts a controller, then the informers it asked for, as the controller manager does (a no-op
   * for a controller that started them itself). Several may run at once, sharing the informers.
   */
  start(controller: Pick<ControllerDescriptor, 'start'>, options?: Record<string, unknown>): Promise<RunningController>;
  /** Adds a teardown step that runs before the controllers stop (last added first), e.g. to end a loop that uses the client. */
  onTeardown(step: () => Promise<void> | void): void;
}

export function useControllerHarness(setup: ControllerHarnessSetup = {}): ControllerHarness {
  const logger = setup.logger ?? quietLogger;
  let api: TestApi;
  let client: RestClient;
  let factory: SharedInformerFactory;
  let stop: AbortController;
  let started: RunningController[];
  let teardownSteps: (() => Promise<void> | void)[];
  let recorders: Map<string, EventRecorder>;
  /** One recorder per reporting component, as the controller manager keeps them. */
  const events = (component: string) => {
    let recorder = recorders.get(component);
    if (!recorder) recorders.set(component, (recorder = new EventRecorder({client, source: {component}, qps: 0, burst: 1})));
    return recorder;
  };

  beforeEach(async () => {
    api = await startTestApi();
    client = new RestClient({config: {server: api.url, insecure: false}});
    factory = new SharedInformerFactory({listWatcherFor: (_ref, path) => clientListWatcher(client, path)});
    stop = new AbortController();
    started = [];
    teardownSteps = [];
    recorders = new Map();
  });

  afterEach(async () => {
    for (const step of teardownSteps.reverse()) await step();
    stop.abort();
    await Promise.all(started.map((controller) => controller.done));
    for (const recorder of recorders.values()) recorder.close();
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
      return started.at(-1);
    },
    abort: () => stop.abort(),
    async replaceListWatcher(listWatcherFor) {
      await factory.shutdown();
      factory = new SharedInformerFactory({listWatcherFor});
    },
    context: (options = {}) => ({client, informers: factory, options, metrics: noopMetricsProvider, logger, now: () => Date.now(), events}),
    async start(controller, options = {}) {
      const running = await controller.start(harness.context(options), stop.signal);
      started.push(running);
      factory.start();
      return running;
    },
    onTeardown(step) {
      teardownSteps.push(step);
    },
  };
  return harness;
}
