/** `orch up`'s own options (not in the seeds): where its files go, and each daemon's pass-through options. */
import type {OptionTable} from './spec.js';
import {namesOption} from './names-option.js';

const SECTION = 'orch up';
const passThrough = (daemon: string) =>
  `An option for ${daemon}, as key=value (e.g. secure-port=7443); repeat for more. It overrides orch up's own setting.`;

export const upOptions: OptionTable = [
  {
    name: 'data-dir', type: 'string', seedType: 'string', seedDefault: '~/.orch/up', default: '~/.orch/up', orchOnly: true,
    help: 'Directory for the store, certificates, orchconfigs and the agent\'s pods.', section: SECTION, implemented: true,
  },
  {name: 'apiserver-arg', type: 'string', seedType: 'string', seedDefault: 'none', repeatable: true, orchOnly: true, help: passThrough('orch apiserver'), section: SECTION, implemented: true},
  {name: 'controller-manager-arg', type: 'string', seedType: 'string', seedDefault: 'none', repeatable: true, orchOnly: true, help: passThrough('orch controller-manager'), section: SECTION, implemented: true},
  {name: 'agent-arg', type: 'string', seedType: 'string', seedDefault: 'none', repeatable: true, orchOnly: true, help: passThrough('orch agent'), section: SECTION, implemented: true},
  {...namesOption, help: `${namesOption.help} Passed to the API server, the controller manager and the agent.`},
  {name: 'v', short: 'v', type: 'int', seedType: 'int', seedDefault: 'none', orchOnly: true, help: 'How much to log; higher numbers log more.', section: SECTION, implemented: true},
];
