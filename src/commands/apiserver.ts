import {OrchCommand, UserError} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {apiserverOptions} from '../options/apiserver.js';
import {applyCommonDaemonOptions} from '../lib/daemon-common.js';

export default class ApiserverCommand extends OrchCommand {
  static summary = 'Run the API server: the Kubernetes REST API on an embedded SQLite or an etcd store.';
  static usage = ['apiserver [flags]'];
  static flags = oclifFlagsFor(apiserverOptions);

  async run(): Promise<void> {
    const {options} = await this.parseOptions('apiserver', apiserverOptions);
    const common = applyCommonDaemonOptions(options.values);
    if (common.printAndExit) {
      process.stdout.write(common.printAndExit + '\n');
      return;
    }
    // The options above are parsed and validated in full; the daemon itself is not built yet.
    throw new UserError('orch apiserver cannot run yet: the daemon is not built in this version (options were parsed and validated)');
  }
}
