/**
 * DefaultIngressClass: an Ingress created without a class (no spec.ingressClassName, no
 * `<labelDomain>/ingress.class` annotation) gets the default IngressClass (annotated
 * `ingressclass.<labelDomain>/is-default-class: "true"`; the newest when several are), as
 * upstream's defaultingressclass plugin.
 */
import {names} from '../../../../api/names.js';
import type {JsonObject} from '../../../../patch/types.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';
import {annotationOf, newestDefault} from './default-class.js';

export function ingressHasClass(ingress: JsonObject): boolean {
  const field = valueAt(ingress, 'spec', 'ingressClassName');
  if (field !== undefined && field !== null) return true;
  return annotationOf(ingress, `${names().labelDomain}/ingress.class`) !== undefined;
}

export function defaultIngressClassFor(ingress: JsonObject, classes: readonly JsonObject[]): string | undefined {
  if (ingressHasClass(ingress)) return undefined;
  const chosen = newestDefault(classes, (c) => annotationOf(c, `ingressclass.${names().labelDomain}/is-default-class`) === 'true');
  return chosen && stringAt(chosen, 'metadata', 'name');
}

export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = 'DefaultIngressClass';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('CREATE');

  async admit(attributes: AdmissionAttributes): Promise<void> {
    const {object} = attributes;
    if (!isResource(attributes, names().groups.networking, 'ingresses') || !object) return;
    if (ingressHasClass(object)) return;
    const name = defaultIngressClassFor(object, await this.objects.list(names().groups.networking, 'ingressclasses'));
    if (name === undefined) return;
    object.spec = {...(object.spec && typeof object.spec === 'object' && !Array.isArray(object.spec) ? object.spec : {}), ingressClassName: name};
  }
}
