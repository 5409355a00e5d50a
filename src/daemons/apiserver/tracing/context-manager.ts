/**
 * OpenTelemetry's active context carried across awaits by Node's AsyncLocalStorage (what
 * @opentelemetry/context-async-hooks does, in the few lines the server needs): the request span is
 * active in everything the request awaits, so storage spans and webhook calls find their parent.
 */
import {AsyncLocalStorage} from 'node:async_hooks';
import {ROOT_CONTEXT, type Context, type ContextManager} from '@opentelemetry/api';

export class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]) => this.with(context, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }

  /**
   * Makes `context` active for the rest of the calling async function and what it awaits (not for
   * its caller): the request handler enters its span once authentication has named the user.
   */
  enter(context: Context): void {
    this.storage.enterWith(context);
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
