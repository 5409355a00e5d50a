/** `orch fleet`'s own options (not in the seeds): how many simulated nodes, their size and health, and how often they report. */
import type {OptionTable} from './spec.js';
import {clientNamesOption} from './names-option.js';

const FLEET = 'orch fleet';
const NODES = 'Simulated nodes';

export const fleetOptions: OptionTable = [
  {
    name: 'orchconfig', type: 'string', seedType: 'string', seedDefault: 'none', orchOnly: true,
    help: 'Path to the orchconfig of the API server to register the nodes with (else ORCHCONFIG, ~/.orch/config). Any Kubernetes API server works.',
    section: FLEET, implemented: true,
  },
  {
    name: 'nodes', type: 'int', seedType: 'int', seedDefault: '10', default: '10', min: 1, max: 32768, orchOnly: true,
    help: 'How many nodes to simulate.', section: FLEET, implemented: true,
  },
  {
    name: 'name', type: 'string', seedType: 'string', seedDefault: 'fleet', default: 'fleet', orchOnly: true,
    help: 'The fleet\'s name: nodes are <name>-0 ... <name>-<N-1> and carry the label fleet.orch.io/name=<name>.',
    section: FLEET, implemented: true,
  },
  {
    name: 'fail-pods-matching', type: 'string', seedType: 'string', seedDefault: 'none', orchOnly: true,
    help: 'A label selector (app=web,tier in (a,b)): pods bound to the fleet that match it are set Failed instead of Running.',
    section: FLEET, implemented: true,
  },
  {
    name: 'complete-pods-after', type: 'duration', seedType: 'duration', seedDefault: '10s', default: '10s', orchOnly: true,
    help: 'Pods with restartPolicy Never or OnFailure (a Job\'s) succeed this long after they started, so that Jobs finish; 0 keeps them running until deleted. A pod\'s spec.activeDeadlineSeconds, when sooner, fails it with DeadlineExceeded (any restartPolicy).',
    section: FLEET, implemented: true,
  },
  {
    name: 'workers', type: 'int', seedType: 'int', seedDefault: '32', default: '32', min: 1, max: 1024, orchOnly: true,
    help: 'API calls for registration, node status and pods in flight at once (lease renewals run on their own timers).',
    section: FLEET, implemented: true,
  },
  {
    name: 'qps', type: 'float', seedType: 'float', seedDefault: '0', default: '0', min: 0, orchOnly: true,
    help: 'Requests per second to the API server, all nodes together; 0 for no limit.', section: FLEET, implemented: true,
  },
  {
    name: 'burst', type: 'int', seedType: 'int', seedDefault: '100', default: '100', min: 1, orchOnly: true,
    help: 'Requests allowed above --qps in a burst.', section: FLEET, implemented: true,
  },
  {
    name: 'node-cpu', type: 'quantity', seedType: 'quantity', seedDefault: '32', default: '32', orchOnly: true,
    help: 'cpu capacity (and allocatable) of each node.', section: NODES, implemented: true,
  },
  {
    name: 'node-memory', type: 'quantity', seedType: 'quantity', seedDefault: '256Gi', default: '256Gi', orchOnly: true,
    help: 'memory capacity (and allocatable) of each node.', section: NODES, implemented: true,
  },
  {
    name: 'max-pods', type: 'int', seedType: 'int', seedDefault: '110', default: '110', min: 1, orchOnly: true,
    help: 'pods capacity of each node.', section: NODES, implemented: true,
  },
  {
    name: 'node-labels', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none', repeatable: true, orchOnly: true,
    help: 'Labels added to every node, as the agent\'s --node-labels.', section: NODES, implemented: true,
  },
  {
    name: 'register-with-taints', type: 'taints', seedType: 'taints', seedDefault: 'none', orchOnly: true,
    help: 'Taints every node registers with (<key>=<value>:<effect>), as the agent\'s.', section: NODES, implemented: true,
  },
  {
    name: 'node-status-update-frequency', type: 'duration', seedType: 'duration', seedDefault: '10s', default: '10s', orchOnly: true,
    help: 'How often each node computes its status and posts it when it changed, as the agent\'s.', section: NODES, implemented: true,
  },
  {
    name: 'node-status-report-frequency', type: 'duration', seedType: 'duration', seedDefault: '5m0s', default: '5m0s', orchOnly: true,
    help: 'An unchanged status is still posted this often (the agent\'s nodeStatusReportFrequency).', section: NODES, implemented: true,
  },
  {
    name: 'node-lease-duration-seconds', type: 'int32', seedType: 'int32', seedDefault: '40', default: '40', min: 1, orchOnly: true,
    help: 'Each node\'s Lease duration; the Lease is renewed every quarter of it (10s by default), the nodes spread over that interval.',
    section: NODES, implemented: true,
  },
  {...clientNamesOption, section: FLEET},
  {name: 'v', short: 'v', type: 'int', seedType: 'int', seedDefault: 'none', orchOnly: true, help: 'How much to log; higher numbers log more.', section: FLEET, implemented: true},
];
