/**
 * What the watchers of one store event share: its decoded objects and its serialized line. Every
 * watch of a collection receives the same StoreEvent object from the store; decoding (JSON.parse of
 * the stored value, then the resource's storage-to-served mapping) and JSON.stringify of the event
 * were done once per watcher, so one pod write with 1,000 watchers of its namespace cost 1,000 parses
 * and 1,000 serializations, and delivery to the last watcher waited for all of them. Upstream's
 * watch cache likewise decodes each event once and serializes it once per encoding (cachingObject).
 *
 * The shared objects are read-only from here on: a watch sends them as they are. Watches that change
 * them (Tables, conversion webhooks) decode and serialize their own.
 */
import type { JsonObject } from '../../../patch/types.js';
import type { StoreEvent } from '../storage/store.js';

export interface DecodedEvent {
  current?: JsonObject;
  previous?: JsonObject;
}

export interface Decoder {
  decode(value: string, revision: number): JsonObject;
}

/** Per event, per decoder (each resource version's registry decodes the same stored value its own way). */
const decodedEvents = new WeakMap<StoreEvent, Map<Decoder, DecodedEvent>>();

/** The event's current and previous objects, decoded once for all watchers of the same decoder. */
export function decodedEvent(event: StoreEvent, decoder: Decoder): DecodedEvent {
  let byDecoder = decodedEvents.get(event);
  if (!byDecoder) decodedEvents.set(event, (byDecoder = new Map()));
  let decoded = byDecoder.get(decoder);
  if (!decoded) {
    decoded = {
      current: event.value !== undefined ? decoder.decode(event.value, event.revision) : undefined,
      previous: event.prevValue !== undefined ? decoder.decode(event.prevValue, event.revision) : undefined,
    };
    byDecoder.set(decoder, decoded);
  }
  return decoded;
}

/** Per shared object, the line of each event type it went out as. */
const lines = new WeakMap<JsonObject, Map<string, string>>();

/** `{"type":...,"object":...}\n` for a shared object, serialized once. */
export function sharedEventLine(type: string, object: JsonObject): string {
  let byType = lines.get(object);
  if (!byType) lines.set(object, (byType = new Map()));
  let line = byType.get(type);
  if (line === undefined) {
    line = `${JSON.stringify({ type, object })}\n`;
    byType.set(type, line);
  }
  return line;
}
