/**
 * NodeDeclaredFeatureValidator: upstream refuses a pod update that needs node features its node
 * does not declare (status.declaredFeatures), behind the NodeDeclaredFeatures feature gate, which
 * is off by default. orch's agents declare no features and no feature of upstream's registry is
 * inferred from a pod here, so, as upstream with its default gates, there is nothing to check: the
 * plugin admits every update. It exists so that naming it in the options is valid.
 */
import type {AdmissionPlugin} from '../interfaces.js';
import {operations} from '../matching.js';

export class NodeDeclaredFeatureValidator implements AdmissionPlugin {
  readonly name = 'NodeDeclaredFeatureValidator';

  readonly handles = operations('UPDATE');

  validate(): void {}
}
