import {Flags} from '@oclif/core';
import {OrchCommand} from '../lib/command.js';
import {COMPONENTS, type StatusReport} from '../cmd/status/report.js';
import {DEFAULT_AGENT_URL, DEFAULT_CONTROLLER_MANAGER_URL} from '../cmd/status/targets.js';

export default class StatusCommand extends OrchCommand {
  static summary = 'Show the health of the API server, the controller manager and the agent, and who leads.';
  static description = `Reads /livez?verbose and /readyz?verbose of each component (the agent
has only /healthz?verbose, read for both) and the leader Lease
orch-system/orch-controller-manager (kube-system/kube-controller-manager on a
server with upstream's names) through the API server, then prints one
table. With -o json it prints this document (keys in this order; a key
marked ? is left out when there is nothing to say):

  components: [{name, url, reachable, ready, livez, readyz, error?}]
  each livez/readyz: {path, httpStatus, ok, checks: [{name, ok, reason?}]},
    or null when the component did not answer
  leader: {holder, renewTime, transitions, leaseDurationSeconds} or null
  ready: whether every selected component is reachable and ready

The exit code is 0 only when every selected component is reachable and ready
(livez and readyz pass), 1 otherwise; the report is printed either way.

The API server is found through the orchconfig (--orchconfig, ORCHCONFIG,
~/.orch/config, and when none exists the admin orchconfig
~/.orch/apiserver/admin.orchconfig), verified and authenticated as kubectl
would. The controller manager and the agent serve self-signed certificates:
their certificates are NOT verified, and no credentials are sent to them.`;
  static examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status -o json --components apiserver,controller-manager',
    '<%= config.bin %> status --agent-url http://127.0.0.1:10248',
    '<%= config.bin %> status --watch',
  ];
  static flags = {
    output: Flags.string({char: 'o', description: 'output format: table or json', default: 'table'}),
    watch: Flags.boolean({char: 'w', description: 'keep checking every second in a live view (terminal only); Ctrl-C to quit', default: false}),
    components: Flags.string({description: `which components to check, comma-separated: ${COMPONENTS.join(',')}`, default: COMPONENTS.join(',')}),
    orchconfig: Flags.string({description: 'path to the orchconfig file for the API server'}),
    context: Flags.string({description: 'the orchconfig context to use'}),
    'controller-manager-url': Flags.string({
      description: 'the controller manager\'s secure endpoint (its certificate is not verified: self-signed by default)',
      default: DEFAULT_CONTROLLER_MANAGER_URL,
    }),
    'agent-url': Flags.string({
      description: 'the agent\'s HTTPS endpoint (--port; certificate not verified), or its plain healthz port (http://127.0.0.1:10248)',
      default: DEFAULT_AGENT_URL,
    }),
    'request-timeout': Flags.string({description: 'limit for each request (a number of seconds or a duration such as 500ms); 0 for none', default: '5s'}),
  };

  async run(): Promise<StatusReport | undefined> {
    const {flags} = await this.parse(StatusCommand);
    const {statusMain} = await import('../cmd/status/main.js');
    return statusMain(flags);
  }
}
