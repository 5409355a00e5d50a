/**
 * AdmissionObjects over a real REST client, for tests that run an admission plugin inside the
 * test API (startTestApi's `admissionPlugins`) before the server's own object access is wired:
 * the plugin reads and writes through HTTP like any client. Core group (v1) resources only.
 */
import {ApiStatusError} from '../../src/client/errors.js';
import type {RestClient} from '../../src/client/rest-client.js';
import {ApiError, failureStatus} from '../../src/api/status.js';
import type {AdmissionObjects} from '../../src/daemons/apiserver/admission/interfaces.js';
import type {JsonObject} from '../../src/patch/types.js';

function collection(group: string, resource: string, namespace?: string): string {
  if (group !== '') throw new Error(`restAdmissionObjects: only the core group, got ${group}/${resource}`);
  return namespace ? `/api/v1/namespaces/${namespace}/${resource}` : `/api/v1/${resource}`;
}

/** Client errors come back as the server's own ApiErrors, as the in-process access would throw them. */
async function asServerError<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiStatusError) throw new ApiError(failureStatus(error.code, error.reason || undefined, error.message));
    throw error;
  }
}

export function restAdmissionObjects(client: () => RestClient): AdmissionObjects {
  return {
    async get(group, resource, namespace, name) {
      try {
        return await client().get<JsonObject>(`${collection(group, resource, namespace)}/${name}`);
      } catch (error) {
        if (error instanceof ApiStatusError && error.code === 404) return undefined;
        throw error;
      }
    },
    list: async (group, resource, namespace) => (await client().get<{items: JsonObject[]}>(collection(group, resource, namespace))).items,
    create: (group, resource, namespace, object) =>
      asServerError(async () => (await client().request({method: 'POST', path: collection(group, resource, namespace), body: object})).body as JsonObject),
    update: (group, resource, namespace, object, subresource) => {
      const name = String((object.metadata as JsonObject).name);
      const path = `${collection(group, resource, namespace)}/${name}${subresource ? `/${subresource}` : ''}`;
      return asServerError(async () => (await client().request({method: 'PUT', path, body: object})).body as JsonObject);
    },
  };
}
