import {DaemonCommand} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {apiserverOptions} from '../options/apiserver.js';
import {applyCommonDaemonOptions} from '../lib/daemon-common.js';
import {selectDaemonNames} from '../lib/select-names.js';

export default class ApiserverCommand extends DaemonCommand {
  static summary = 'Run the API server: the Kubernetes REST API on an embedded SQLite or an etcd store.';
  static usage = ['apiserver [flags]'];
  static flags = oclifFlagsFor(apiserverOptions);

  async run(): Promise<void> {
    const {options} = await this.parseOptions('apiserver', apiserverOptions);
    await selectDaemonNames(apiserverOptions, options);
    const common = applyCommonDaemonOptions(options.values, true);
    if (common.printAndExit) {
      process.stdout.write(common.printAndExit + '\n');
      return;
    }
    const {apiServerConfig} = await import('../daemons/apiserver/config.js');
    const {runApiServer} = await import('../cmd/apiserver/run.js');
    await runApiServer(apiServerConfig(options.values, common.version, options.explicit));
  }
}
