/**
 * AlwaysPullImages: every container of a new pod (or of an update that brings a new image) pulls
 * its image always, so a pod cannot use an image cached on its node that its own pull secrets would
 * not let it pull (upstream's alwayspullimages). The validating half refuses what a later plugin
 * changed back.
 */
import {field, fieldErrorText, plainServerError, type ApiError} from '../../../../api/status.js';
import type {JsonObject} from '../../../../patch/types.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin} from '../interfaces.js';
import {admissionForbidden} from '../errors.js';
import {containersOf, podProper, specOf} from './pod-helpers.js';

const imagesOf = (pod: JsonObject | undefined): Set<string> =>
  new Set(pod ? containersOf(specOf(pod)).map(({container}) => String(container.image ?? '')) : []);

/** Upstream's isUpdateWithNoNewImages: an update whose images were all in the old pod is left alone. */
function ignored(attributes: AdmissionAttributes): JsonObject | undefined {
  const pod = podProper(attributes);
  if (!pod) return undefined;
  if (attributes.operation === 'UPDATE') {
    const old = imagesOf(attributes.oldObject);
    if ([...imagesOf(pod)].every((image) => old.has(image))) return undefined;
  }
  return pod;
}

/** The containers whose pull policy is not Always, as upstream's field errors. */
export function pullPolicyViolations(pod: JsonObject): string[] {
  return containersOf(specOf(pod))
    .filter(({container}) => container.imagePullPolicy !== 'Always')
    .map(({container, path}) => fieldErrorText(field.notSupported(`${path}.imagePullPolicy`, container.imagePullPolicy ?? '', ['Always'])));
}

export class AlwaysPullImages implements AdmissionPlugin {
  readonly name = 'AlwaysPullImages';

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  admit(attributes: AdmissionAttributes): void {
    const pod = ignored(attributes);
    if (!pod) return;
    for (const {container} of containersOf(specOf(pod))) container.imagePullPolicy = 'Always';
  }

  validate(attributes: AdmissionAttributes): void {
    const pod = ignored(attributes);
    if (!pod) return;
    const violations = pullPolicyViolations(pod);
    if (violations.length === 0) return;
    const errors: ApiError[] = violations.map((v) => admissionForbidden(attributes, v));
    // One error is the Forbidden itself; several are upstream's aggregate, a plain 500 listing them.
    throw errors.length === 1 ? errors[0]! : plainServerError(`[${errors.map((e) => e.message).join(', ')}]`);
  }
}
