import {DaemonCommand} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {upOptions} from '../options/up.js';
import {configureKlog} from '../lib/klog.js';
import {versionInfo} from '../lib/version.js';
import type {NameSetId} from '../api/names.js';

export default class UpCommand extends DaemonCommand {
  static summary = 'Run the whole control plane in one process: the API server, the controller manager with a scheduler, and an agent for this machine.';
  static usage = ['up [--data-dir DIR] [--names orch|kubernetes] [--apiserver-arg key=value] [--controller-manager-arg key=value] [--agent-arg key=value]'];
  static flags = oclifFlagsFor(upOptions);

  async run(): Promise<void> {
    const {options} = await this.parseOptions('up' as never, upOptions);
    const v = options.values;
    if (typeof v.v === 'number') configureKlog({verbosity: v.v});
    const {runUp} = await import('../cmd/up/run.js');
    await runUp({
      dataDir: v['data-dir'] as string,
      apiserverArgs: (v['apiserver-arg'] as string[] | undefined) ?? [],
      controllerManagerArgs: (v['controller-manager-arg'] as string[] | undefined) ?? [],
      agentArgs: (v['agent-arg'] as string[] | undefined) ?? [],
      version: versionInfo(),
      names: v.names as NameSetId,
    });
  }
}
