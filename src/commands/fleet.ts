import {DaemonCommand} from '../lib/command.js';
import {oclifFlagsFor} from '../options/flags.js';
import {fleetOptions} from '../options/fleet.js';
import {configureKlog} from '../lib/klog.js';
import {discoverNameSet, selectDaemonNames} from '../lib/select-names.js';

export default class FleetCommand extends DaemonCommand {
  static summary = 'Simulate a fleet of nodes (kwok-like): register N nodes, renew their leases, post their status and "run" the pods bound to them.';
  static description = `Nodes <name>-0 ... <name>-<N-1> are registered with the API server of the
orchconfig, look Ready and keep their Leases renewed, and every pod bound to one of them
is set Running and Ready (no process is started). Deleting such a pod removes it after
its grace period. To drive the controllers, set a node's health with an annotation:

  kubectl annotate node fleet-3 fleet.orch.io/state=NotReady
      the node posts Ready=False (the node lifecycle controller taints it not-ready)
  kubectl annotate node fleet-3 fleet.orch.io/state=Silent
      the node stops renewing its Lease and posting status (the controller marks it
      Unknown, taints it unreachable and evicts its pods)
  kubectl annotate node fleet-3 fleet.orch.io/state-
      back to Ready

(fleet.kubernetes.io/state on a server with upstream's names)

and make pods fail with --fail-pods-matching. Stop with Ctrl-C: the nodes stay registered.`;
  static usage = ['fleet [--nodes N] [--name NAME] [--orchconfig FILE] [flags]'];
  static examples = [
    '<%= config.bin %> fleet --nodes 100',
    '<%= config.bin %> fleet --nodes 5000 --name big --node-labels topology.orch.io/zone=zone-a',
    '<%= config.bin %> fleet --nodes 10 --fail-pods-matching app=flaky',
  ];
  static flags = oclifFlagsFor(fleetOptions);

  async run(): Promise<void> {
    const {options} = await this.parseOptions('fleet' as never, fleetOptions);
    const v = options.values;
    if (typeof v.v === 'number') configureKlog({verbosity: v.v});
    const orchconfig = v.orchconfig as string | undefined;
    await selectDaemonNames(fleetOptions, options, () => discoverNameSet({orchconfig: orchconfig ?? ''}));
    const {runFleet} = await import('../cmd/fleet/run.js');
    await runFleet(options.values);
  }
}
