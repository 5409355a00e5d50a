/**
 * DefaultTolerationSeconds: a pod that does not tolerate the not-ready and unreachable NoExecute
 * taints gets tolerations of them for `--default-not-ready-toleration-seconds` and
 * `--default-unreachable-toleration-seconds` (300 each), so the node lifecycle controller evicts it
 * that long after its node fails rather than at once (upstream's defaulttolerationseconds).
 */
import {names} from '../../../../api/names.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {podProper, specOf, tolerationJson, tolerationsOf, type Toleration} from './pod-helpers.js';

export interface DefaultTolerationSecondsOptions {
  notReadySeconds: number;
  unreachableSeconds: number;
}

/** Whether the pod already tolerates the NoExecute taint `key` (an empty key or effect matches all). */
function tolerates(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some((t) => ((t.key ?? '') === key || (t.key ?? '') === '') && ((t.effect ?? '') === 'NoExecute' || (t.effect ?? '') === ''));
}

/** The pure decision: the tolerations to append (none when the pod tolerates both taints already). */
export function missingDefaultTolerations(tolerations: readonly Toleration[], o: DefaultTolerationSecondsOptions): Toleration[] {
  const {notReady, unreachable} = names().taints;
  const added: Toleration[] = [];
  if (!tolerates(tolerations, notReady)) added.push({key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: o.notReadySeconds});
  if (!tolerates(tolerations, unreachable)) added.push({key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: o.unreachableSeconds});
  return added;
}

export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = 'DefaultTolerationSeconds';

  constructor(private readonly options: DefaultTolerationSecondsOptions) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  admit(attributes: AdmissionAttributes): void {
    const pod = podProper(attributes);
    if (!pod) return;
    const spec = specOf(pod);
    const added = missingDefaultTolerations(tolerationsOf(spec), this.options);
    if (added.length === 0) return;
    spec.tolerations = [...(Array.isArray(spec.tolerations) ? spec.tolerations : []), ...added.map(tolerationJson)];
  }
}

/** The factory: the two options of the server (300 s each by default). */
export function createDefaultTolerationSeconds(context: AdmissionPluginContext): DefaultTolerationSeconds {
  const seconds = (key: string) => (typeof context.serverOptions[key] === 'number' ? (context.serverOptions[key] as number) : 300);
  return new DefaultTolerationSeconds({notReadySeconds: seconds('defaultNotReadyTolerationSeconds'), unreachableSeconds: seconds('defaultUnreachableTolerationSeconds')});
}
