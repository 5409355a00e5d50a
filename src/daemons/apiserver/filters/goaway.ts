/**
 * --goaway-chance: upstream's WithProbabilisticGoaway. A fraction of HTTP/2 requests get their
 * connection closed (GOAWAY) after the response, so that long-lived HTTP/2 clients reconnect and
 * spread over the servers behind a load balancer. Only HTTP/2 connections are affected, as
 * upstream: HTTP/1 clients open connections per request anyway.
 */
import {tearDownConnection} from './connection.js';
import {isHttp2, type Filter} from '../../shared/http/http-types.js';

export interface GoawayOptions {
  /** Probability in [0, 0.02]; 0 turns the filter off. */
  chance: number;
  /** Uniform random number in [0, 1); injectable for tests. */
  random?: () => number;
}

export function goawayFilter({chance, random = Math.random}: GoawayOptions): Filter {
  return (req, res, next) => {
    if (chance > 0 && isHttp2(req) && random() < chance) tearDownConnection(req, res);
    next();
  };
}
