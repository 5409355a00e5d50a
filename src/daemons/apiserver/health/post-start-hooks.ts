/**
 * Post-start hooks (upstream's hooks.go): named start-up steps that run once, concurrently, after
 * the listener is up. Each hook has a boot-sequence health check `poststarthook/<name>` that fails
 * with `not finished` until the hook returns; a hook that throws is fatal for the process
 * (`PostStartHook "<name>" failed: <err>`), unless the server is stopping: a hook stopped by the
 * signal of run() is not a failure (upstream's hooks return when their stop channel closes).
 */
import {klog} from '../../../lib/klog.js';
import {errorText, type HealthCheck} from '../../shared/health/check.js';
import type {HealthRegistry} from '../../shared/health/registry.js';

export interface PostStartHookContext {
  /** Aborted when the server shuts down; long-running hooks (controllers) stop on it. */
  signal: AbortSignal;
}

export type PostStartHook = (context: PostStartHookContext) => Promise<void> | void;

export interface PostStartHooksOptions {
  registry: HealthRegistry;
  /** A hook failed: log and exit (default: klog error line, exit code 255 as klog.Fatal). */
  onFatal?: (message: string) => void;
}

interface HookEntry {
  name: string;
  hook: PostStartHook;
  done: boolean;
}

export class PostStartHooks {
  private readonly registry: HealthRegistry;
  private readonly onFatal: (message: string) => void;
  private readonly hooks = new Map<string, HookEntry>();
  private started = false;

  constructor(options: PostStartHooksOptions) {
    this.registry = options.registry;
    this.onFatal = options.onFatal ?? exitFatally;
  }

  /** Registers a hook and its `poststarthook/<name>` check. */
  add(name: string, hook: PostStartHook): void {
    if (this.started) throw new Error(`unable to add ${JSON.stringify(name)} because PostStartHooks have already been executed`);
    if (this.hooks.has(name)) throw new Error(`unable to add ${JSON.stringify(name)} because it was already registered`);
    const entry: HookEntry = {name, hook, done: false};
    this.hooks.set(name, entry);
    const check: HealthCheck = {
      name: `poststarthook/${name}`,
      check: () => {
        if (!entry.done) throw new Error('not finished');
      },
    };
    this.registry.addBootSequenceChecks(check);
  }

  /**
   * Starts every hook at once; resolves when all have finished (a failed hook never resolves it).
   * `signal` aborts when the server stops: hooks still running end, and what they throw then is not fatal.
   */
  run(signal: AbortSignal = new AbortController().signal): Promise<void> {
    this.started = true;
    const runs = [...this.hooks.values()].map(
      (entry) =>
        new Promise<void>((resolve) => {
          Promise.resolve()
            .then(() => entry.hook({signal}))
            .then(
              () => {
                entry.done = true;
                resolve();
              },
              (error: unknown) => {
                if (signal.aborted) return resolve();
                this.onFatal(`PostStartHook ${JSON.stringify(entry.name)} failed: ${errorText(error)}`);
              },
            );
        }),
    );
    return Promise.all(runs).then(() => undefined);
  }

  /** Hook names with their state, in registration order (for the dashboard). */
  status(): {name: string; done: boolean}[] {
    return [...this.hooks.values()].map(({name, done}) => ({name, done}));
  }
}

function exitFatally(message: string): void {
  klog('hooks.ts').error(message);
  process.exit(255);
}
