/** API errors as kubectl prints them (CheckErr), and the Status a client makes up for a non-Status error body. */
import {describe, expect, it} from '@jest/globals';
import {ApiConnectionError, ApiStatusError, errorFromResponse, genericServerError, type Status} from '../../src/client/errors.js';
import {NoResourceMatchError, errorReport} from '../../src/client/error-text.js';
import {UserError} from '../../src/lib/errors.js';

const status = (s: Partial<Status>): ApiStatusError => new ApiStatusError({kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', ...s});

describe('errorReport (one error)', () => {
  it.each<[string, unknown, string]>([
    ['NotFound', status({code: 404, reason: 'NotFound', message: 'pods "x" not found', details: {name: 'x', kind: 'pods'}}), 'Error from server (NotFound): pods "x" not found\n'],
    ['Conflict', status({code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on pods "web": the object has been modified'}), 'Error from server (Conflict): Operation cannot be fulfilled on pods "web": the object has been modified\n'],
    ['no reason', status({code: 500, message: 'map: map[image:x] does not contain declared merge key: name'}), 'Error from server: map: map[image:x] does not contain declared merge key: name\n'],
    ['Unauthorized', status({code: 401, reason: 'Unauthorized', message: 'Unauthorized'}), 'error: You must be logged in to the server (Unauthorized)\n'],
    [
      'Invalid, one cause',
      status({code: 422, reason: 'Invalid', message: 'Pod "web" is invalid: ...', details: {kind: 'Pod', name: 'web', causes: [{reason: 'FieldValueRequired', field: 'spec.containers[0].image', message: 'Required value'}]}}),
      'The Pod "web" is invalid: spec.containers[0].image: Required value\n',
    ],
    [
      'Invalid, several causes',
      status({code: 422, reason: 'Invalid', details: {kind: 'Pod', name: 'web', causes: [{field: 'a', message: 'Required value'}, {field: 'b', message: 'Invalid value: 1'}]}}),
      'The Pod "web" is invalid: \n* a: Required value\n* b: Invalid value: 1\n',
    ],
    ['Invalid, no kind or causes', status({code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request', details: {}}), 'The request is invalid: the server rejected our request due to an error in our request\n'],
    ['Invalid, no details', status({code: 422, reason: 'Invalid', message: 'bad'}), 'The request is invalid: bad\n'],
    ['refused', new ApiConnectionError('GET', 'https://10.0.0.1:6443/api', Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), {code: 'ECONNREFUSED'})), 'The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?\n'],
    ['other transport failure', new ApiConnectionError('GET', 'https://h/api', new Error('self-signed certificate in certificate chain')), 'Unable to connect to the server: self-signed certificate in certificate chain\n'],
    ['unknown type', new NoResourceMatchError('foos'), 'error: the server doesn\'t have a resource type "foos"\n'],
    ['user error', new UserError('no objects passed to patch'), 'error: no objects passed to patch\n'],
  ])('%s', (_name, error, text) => expect(errorReport([error])).toBe(text));
});

it('errorReport prints several errors one per line, without the error: prefix', () => {
  expect(errorReport([status({reason: 'NotFound', message: 'pods "a" not found'}), new Error('boom')])).toBe('Error from server (NotFound): pods "a" not found\nboom\n');
});

describe('Status from an error response', () => {
  it('keeps the server Status as is', () => {
    const body = {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'm', reason: 'Forbidden', details: {kind: 'pods'}, code: 403};
    const error = errorFromResponse(403, body, JSON.stringify(body), {method: 'GET'});
    expect([error.code, error.reason, error.message, error.status]).toEqual([403, 'Forbidden', 'm', body]);
  });

  it.each<[number, string, string, string, string]>([
    [429, 'GET', 'Too many requests, please try again later.', 'TooManyRequests', 'the server has received too many requests and has asked us to try again later (get pods web)'],
    [409, 'POST', '', 'AlreadyExists', 'the server reported a conflict (post pods web)'],
    [409, 'PATCH', '', 'Conflict', 'the server reported a conflict (patch pods web)'],
    [404, 'GET', '404 page not found', 'NotFound', 'the server could not find the requested resource (get pods web)'],
    [403, 'GET', 'denied by proxy', 'Forbidden', 'denied by proxy (get pods web)'],
    [502, 'GET', 'bad gateway', 'InternalError', 'an error on the server ("bad gateway") has prevented the request from succeeding (get pods web)'],
    [418, 'GET', 'teapot', 'Unknown', 'the server responded with the status code 418 but did not return more information (get pods web)'],
  ])('%d %s with a plain-text body', (code, method, text, reason, message) => {
    const error = genericServerError(code, text, {method, resource: 'pods', name: 'web'});
    expect([error.code, error.reason, error.message]).toEqual([code, reason, message]);
  });
});
