import {DaemonCommand} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {agentOptions} from '../options/agent.js';
import {applyCommonDaemonOptions} from '../lib/daemon-common.js';
import {discoverNameSet, selectDaemonNames} from '../lib/select-names.js';

export default class AgentCommand extends DaemonCommand {
  static summary = 'Run the node agent: register this node, run its pods as processes, evict under pressure.';
  static usage = ['agent [flags]'];
  static flags = oclifFlagsFor(agentOptions);

  async run(): Promise<void> {
    const {options} = await this.parseOptions('agent', agentOptions);
    const common = applyCommonDaemonOptions(options.values);
    if (common.printAndExit) {
      process.stdout.write(common.printAndExit + '\n');
      return;
    }
    // Without --names, an agent with an API server follows it (bounded retries while it starts).
    const orchconfig = options.values.orchconfig as string | undefined;
    await selectDaemonNames(agentOptions, options, orchconfig ? () => discoverNameSet({orchconfig}) : undefined);
    const {runAgent} = await import('../cmd/agent/run.js');
    await runAgent(options, common.version);
  }
}
