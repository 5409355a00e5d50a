/** The loose shape of an API object as the client handles it: JSON with apiVersion, kind and metadata. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {name?: string; namespace?: string; [key: string]: unknown};
  [key: string]: unknown;
}

export function isApiObject(value: unknown): value is ApiObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `List` objects (and any `*List` kind with items) stand for their items, as kubectl's builder treats them. */
export function flattenLists(objects: readonly ApiObject[]): ApiObject[] {
  const out: ApiObject[] = [];
  for (const object of objects) {
    if (typeof object.kind === 'string' && object.kind.endsWith('List') && Array.isArray(object.items)) {
      out.push(...flattenLists(object.items.filter(isApiObject)));
    } else {
      out.push(object);
    }
  }
  return out;
}
