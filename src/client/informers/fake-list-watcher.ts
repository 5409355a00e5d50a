/**
 * A ListWatcher tests drive by hand (client-go's FakeControllerSource in spirit): each list call is
 * answered by `onList`, each watch is recorded and stays open until the test ends it or sends events.
 * For controller tests too: feed objects to an informer without an API server.
 */
import type { ListOptions, ListResult, ListWatcher, Unstructured, WatchEvent, WatchOptions } from './types.js';

export interface FakeWatch<T> {
  options: WatchOptions;
  closed: boolean;
  /** The stream ended by itself (`end`) rather than by the client's close(). */
  ended: boolean;
  send(event: WatchEvent<T>): void;
  /** Ends the stream as the server would: cleanly, or with an error. */
  end(error?: unknown): void;
}

export class FakeListWatcher<T = Unstructured> implements ListWatcher<T> {
  readonly lists: ListOptions[] = [];
  readonly watches: FakeWatch<T>[] = [];
  /** Answers list calls; a thrown/rejected error fails the list. */
  onList: (options: ListOptions) => ListResult<T> | Promise<ListResult<T>> = () => ({ items: [], resourceVersion: '1' });
  /** Called when a watch opens; throwing ends the watch with that error at once (like an HTTP error). */
  onWatch: (options: WatchOptions) => void = () => undefined;

  async list(options: ListOptions): Promise<ListResult<T>> {
    this.lists.push(options);
    return this.onList(options);
  }

  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void, onEnd: (error?: unknown) => void) {
    const watch: FakeWatch<T> = {
      options,
      closed: false,
      ended: false,
      send: (event) => {
        if (!watch.closed) onEvent(event);
      },
      end: (error) => {
        if (watch.closed) return;
        watch.closed = true;
        watch.ended = true;
        onEnd(error);
      },
    };
    this.watches.push(watch);
    try {
      this.onWatch(options);
    } catch (error) {
      queueMicrotask(() => watch.end(error));
    }
    return { close: () => void (watch.closed = true) };
  }

  /** The watch opened last. */
  get lastWatch(): FakeWatch<T> | undefined {
    return this.watches.at(-1);
  }

  /** Watches still open. */
  get openWatches(): FakeWatch<T>[] {
    return this.watches.filter((w) => !w.closed);
  }
}
