export {composeFilters, requestPath, requestQuery, headerValue, isHttp2, type Filter, type RequestLike, type ResponseLike} from '../../shared/http/http-types.js';
export {writeStatus, writeStatusObject, writeHttpError, failureStatus, statusJson, type StatusObject, type StatusDetails, type StatusCause} from '../../shared/http/status.js';
export {requestInfoOf, isLongRunning, isMutating, isLongRunningRequest, type RequestInfo} from './request-info.js';
export {tearDownConnection} from './connection.js';
export {maxInFlightFilter, type MaxInFlightOptions, type MaxInFlightFilter} from './max-in-flight.js';
export {requestTimeoutFilter, requestDeadline, effectiveTimeoutMs, TIMEOUT_MESSAGE, type RequestTimeoutOptions, type RequestDeadline} from './timeout.js';
export {goawayFilter, type GoawayOptions} from './goaway.js';
export {cacheControlFilter, hstsFilter} from './headers.js';
export {watchTimeoutMs} from './watch-timeout.js';
