/** authentication/v1 and authorization/v1: the reviews, create-only and never stored. */
import type {NameSet} from '../names.js';
import type {ResourceInfo} from '../resources.js';
import {catalog, CREATE_ONLY} from './build.js';

export function authenticationResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.authentication, 'v1', [
    {kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', namespaced: false, verbs: CREATE_ONLY, rest: 'review'},
    {kind: 'TokenReview', plural: 'tokenreviews', namespaced: false, verbs: CREATE_ONLY, rest: 'review'},
  ]);
}

export function authorizationResources(n: NameSet): ResourceInfo[] {
  return catalog(n.groups.authorization, 'v1', [
    {kind: 'LocalSubjectAccessReview', plural: 'localsubjectaccessreviews', namespaced: true, verbs: CREATE_ONLY, rest: 'review'},
    {kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews', namespaced: false, verbs: CREATE_ONLY, rest: 'review'},
    {kind: 'SelfSubjectRulesReview', plural: 'selfsubjectrulesreviews', namespaced: false, verbs: CREATE_ONLY, rest: 'review'},
    {kind: 'SubjectAccessReview', plural: 'subjectaccessreviews', namespaced: false, verbs: CREATE_ONLY, rest: 'review'},
  ]);
}
