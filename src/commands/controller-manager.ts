import {DaemonCommand} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {controllerManagerOptions} from '../options/controller-manager.js';
import {applyCommonDaemonOptions} from '../lib/daemon-common.js';
import {discoverNameSet, selectDaemonNames} from '../lib/select-names.js';

export default class ControllerManagerCommand extends DaemonCommand {
  static summary = 'Run the controller manager: leader election and the core controllers.';
  static usage = ['controller-manager [flags]'];
  static flags = oclifFlagsFor(controllerManagerOptions);

  async run(): Promise<void> {
    const {options} = await this.parseOptions('controller-manager', controllerManagerOptions);
    const common = applyCommonDaemonOptions(options.values, true);
    if (common.printAndExit) {
      process.stdout.write(common.printAndExit + '\n');
      return;
    }
    // Without --names, follow the server (it may still be starting: bounded retries).
    const v = options.values;
    const orchconfig = v.orchconfig as string | undefined;
    await selectDaemonNames(controllerManagerOptions, options, orchconfig || v.master ? () => discoverNameSet({orchconfig: orchconfig ?? '', server: v.master as string | undefined}) : undefined);
    if (options.explicit.has('orch-api-content-type') && !String(options.values['orch-api-content-type']).includes('json')) {
      process.stderr.write(`Warning: --orch-api-content-type=${String(options.values['orch-api-content-type'])}: orch speaks JSON to the API server; requests are sent as application/json\n`);
    }
    const {controllerManagerConfig} = await import('../daemons/controller-manager/config.js');
    const {runControllerManager} = await import('../cmd/controller-manager/run.js');
    await runControllerManager(controllerManagerConfig(options.values, common.version));
  }
}
