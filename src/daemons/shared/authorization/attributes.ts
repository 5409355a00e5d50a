/** What an authorizer decides on, as upstream's authorizer.Attributes. */
import type {UserInfo} from '../authentication/user.js';

export interface AuthorizationAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection, impersonate, ... (lowercase). */
  verb: string;
  /** True for requests on API resources; false for non-resource paths (`/healthz`, `/version`). */
  resourceRequest: boolean;
  /** The API group ('' for the core group). */
  apiGroup?: string;
  apiVersion?: string;
  /** Plural resource name, e.g. `pods`. */
  resource?: string;
  /** e.g. `status`, `scale`, `binding`. */
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The request path, for non-resource requests. */
  path?: string;
}

export type Decision = 'Allow' | 'Deny' | 'NoOpinion';

export interface AuthorizationResult {
  decision: Decision;
  /** Why, when there is something to say; appended to the 403 message. */
  reason: string;
  /**
   * Set when the authorizer could not decide (a webhook that is down): unless another authorizer
   * allows, the request fails with a 500 carrying this error, as upstream's authorization filter.
   */
  error?: Error;
}

/** One authorization mode. May be asynchronous (a webhook authorizer will be). */
export interface Authorizer {
  authorize(attributes: AuthorizationAttributes): AuthorizationResult | Promise<AuthorizationResult>;
}
