/**
 * `--names orch|kubernetes`: the orch-only option every daemon and `orch up` take, choosing the
 * product identifiers the process uses (src/api/names.ts): the seed's (`orch`, the default) or
 * upstream's (`kubernetes`: `k8s.io` groups, `kube-system`, `kubernetes.io/hostname`, ...).
 */
import {NAME_SET_IDS} from '../api/names.js';
import type {OptionSpec} from './spec.js';

const HELP =
  'Which names the cluster uses: orch (the seed\'s: orch.io groups, orch-system, orch.io/hostname) or kubernetes ' +
  '(upstream\'s: k8s.io groups, kube-system, kubernetes.io/hostname), so that manifests, charts and typed clients written for Kubernetes work unchanged.';

/** The API server's and `orch up`'s: the names the cluster is created with (default orch). */
export const namesOption: OptionSpec = {
  name: 'names', type: 'string', seedType: 'string', seedDefault: 'orch', default: 'orch', enum: NAME_SET_IDS,
  help: HELP, section: 'orch', implemented: true, orchOnly: true,
};

/** The controller manager's and the agent's: when not given, they ask the API server's discovery. */
export const clientNamesOption: OptionSpec = {
  ...namesOption,
  seedDefault: 'none', default: undefined,
  help: `${HELP} When not given, learned from the API server (whether it serves the coordination.k8s.io group).`,
};
