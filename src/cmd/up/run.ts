/**
 * `orch up`: the API server on the embedded store, the controller manager (with the scheduler) and
 * an agent for this machine, in one process. Each still talks to the API server over its REST API
 * with a client certificate of its own; secure by default: RBAC, no anonymous access, and each
 * component bound only to the roles it needs. Ctrl-C stops them in order: agent, controller
 * manager, then the API server through its shutdown sequence.
 */
import {join} from 'node:path';
import {hostname} from 'node:os';
import {readFile} from 'node:fs/promises';
import {parseCommandLine} from '../../lib/parse-command-line.js';
import {apiserverOptions} from '../../options/apiserver.js';
import {controllerManagerOptions} from '../../options/controller-manager.js';
import {agentOptions} from '../../options/agent.js';
import {apiServerConfig} from '../../daemons/apiserver/config.js';
import {ApiServer} from '../../daemons/apiserver/server.js';
import {controllerManagerConfig} from '../../daemons/controller-manager/config.js';
import {ControllerManager} from '../../daemons/controller-manager/manager.js';
import {Agent} from '../../daemons/agent/agent.js';
import {applyHeapGrowth} from '../../lib/heap-growth.js';
import {loadAgentConfiguration} from '../../daemons/agent/config/index.js';
import {ensureClientCertificate} from '../../daemons/shared/pki/cert-dir.js';
import {GENERATED_KEY_FILE} from '../../daemons/apiserver/authentication/serviceaccount/setup.js';
import {writeAdminOrchconfig, resolveClientConfig} from '../../client/orchconfig.js';
import {RestClient} from '../../client/rest-client.js';
import {ApiStatusError} from '../../client/errors.js';
import {names, selectNames, type NameSetId} from '../../api/names.js';
import {UserError} from '../../lib/errors.js';
import {nodeStatusDeps} from '../agent/run.js';
import {mergeDaemonArgs, passedValue, setByUpOnly} from './pass-through.js';
import {configureKlog, klog} from '../../lib/klog.js';
import type {VersionInfo} from '../../lib/version.js';
import type {UpSnapshot} from '../../ui/up-dashboard.js';
import {loadForTerminal} from '../../lib/load-for-terminal.js';

const log = klog('cmd/up.ts');

export interface UpOptions {
  dataDir: string;
  apiserverArgs: string[];
  controllerManagerArgs: string[];
  agentArgs: string[];
  version: VersionInfo;
  /** `--names`: the name set of the whole cluster, passed to all three daemons. */
  names?: NameSetId;
}

/** The roles each component needs, bound to the identity of its client certificate. */
async function bindComponentRoles(admin: RestClient): Promise<void> {
  const n = names();
  const rbac = n.groups.rbac;
  const bindings = [
    {name: 'orch-up:scheduler', role: n.users.scheduler, subject: {kind: 'User', apiGroup: rbac, name: n.users.controllerManager}},
  ];
  for (const b of bindings) {
    try {
      await admin.request({
        method: 'POST',
        path: `/apis/${rbac}/v1/clusterrolebindings`,
        body: {apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: {name: b.name}, roleRef: {apiGroup: rbac, kind: 'ClusterRole', name: b.role}, subjects: [b.subject]},
      });
    } catch (error) {
      if (!(error instanceof ApiStatusError && error.code === 409)) throw error;
    }
  }
}

/** A daemon's pass-through `names=` must agree with `orch up --names` (one cluster, one name set). */
function checkNames(daemon: string, values: Record<string, unknown>, expected: NameSetId): void {
  if (values.names !== undefined && values.names !== expected) {
    throw new UserError(`--${daemon}-arg names=${String(values.names)} differs from --names ${expected}: give the name set once, as orch up --names ${values.names}`);
  }
}

export async function runUp(o: UpOptions, terminal = Boolean(process.stdout.isTTY)): Promise<void> {
  applyHeapGrowth();
  // One name set for the whole process, chosen before any daemon is built.
  const nameSetId = o.names ?? 'orch';
  selectNames(nameSetId);
  const {users} = names();
  // The node's name is the agent's (--agent-arg hostname-override=...): its client certificate must
  // name the same node, or the Node authorizer refuses its own lease and pods.
  const nodeName = (passedValue(o.agentArgs, 'hostname-override') || hostname()).toLowerCase();
  const apiDir = join(o.dataDir, 'apiserver');
  // Privileged containers allowed, as kubeadm and kind set up their API servers (the seed's default refuses them).
  const apiDefaults = {'data-dir': apiDir, 'authorization-mode': 'Node,RBAC', 'anonymous-auth': 'false', 'allow-privileged': 'true', names: nameSetId};
  const apiArgs = mergeDaemonArgs('apiserver', apiDefaults, o.apiserverArgs);
  const api = await parseCommandLine('apiserver', apiserverOptions, apiArgs, setByUpOnly(apiDefaults, o.apiserverArgs));
  checkNames('apiserver', api.options.values, nameSetId);
  const apiConfig = apiServerConfig(api.options.values, o.version, api.options.explicit);

  let emitter: {update(s: UpSnapshot): void; close(): void} | undefined;
  let dashboard: {unmount(): void} | undefined;
  if (terminal) {
    const [{StateEmitter}, {LogBuffer}, {renderUpDashboard}] = await Promise.all([
      import('../../ui/state-emitter.js'),
      import('../../ui/components/log-buffer.js'),
      loadForTerminal(() => import('../../ui/up-dashboard.js')),
    ]);
    const logs = new LogBuffer();
    configureKlog({out: (l) => logs.append(l), err: (l) => logs.append(l)});
    const e = new StateEmitter<UpSnapshot>({ignoreKeys: ['at']});
    emitter = e;
    dashboard = renderUpDashboard(e, logs);
  }

  const apiserver = new ApiServer(apiConfig);
  let controllerManager: ControllerManager | undefined;
  let agent: Agent | undefined;
  let cmRun: Promise<'lost' | 'stopped'> | undefined;
  const snapshot = (): UpSnapshot => ({apiserver: apiserver.snapshot(), controllerManager: controllerManager?.snapshot(), agent: agent?.snapshot(), at: Date.now()});
  let ticks = 0;
  const timer = setInterval(async () => {
    if (ticks++ % 4 === 0) await apiserver.refreshChecks().catch(() => undefined);
    emitter?.update(snapshot());
  }, 250);

  const stopping = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  try {
    await apiserver.start();
    // Client certificates for the two other components, signed by the API server's CA.
    const ca = {certPem: await readFile(join(apiConfig.certDir, 'ca.crt'), 'utf8'), keyPem: await readFile(join(apiConfig.certDir, 'ca.key'), 'utf8')};
    const nodeUser = `${users.nodePrefix}${nodeName}`;
    const cmCert = await ensureClientCertificate(apiConfig.certDir, 'controller-manager', ca, {user: users.controllerManager, groups: []});
    const agentCert = await ensureClientCertificate(apiConfig.certDir, 'agent', ca, {user: nodeUser, groups: [users.nodesGroup]});
    const cmOrchconfig = join(o.dataDir, 'controller-manager.orchconfig');
    const agentOrchconfig = join(o.dataDir, 'agent.orchconfig');
    await writeAdminOrchconfig(cmOrchconfig, {server: apiserver.url, caPem: ca.certPem, certPem: cmCert.certPem, keyPem: cmCert.keyPem, userName: users.controllerManager});
    await writeAdminOrchconfig(agentOrchconfig, {server: apiserver.url, caPem: ca.certPem, certPem: agentCert.certPem, keyPem: agentCert.keyPem, userName: nodeUser});
    const admin = new RestClient({config: await resolveClientConfig({orchconfig: apiConfig.orchconfigPath})});
    await waitFor(async () => (await admin.request({method: 'GET', path: '/readyz'}).then(() => true, () => false)), 60_000, 'the API server to be ready');
    await bindComponentRoles(admin);
    admin.close();

    // Its secure port asks the API server who is calling and what they may do (delegated auth).
    const cmDefaults = {
      orchconfig: cmOrchconfig, controllers: '*,scheduler', 'cert-dir': join(o.dataDir, 'controller-manager', 'pki'), names: nameSetId,
      'authentication-orchconfig': cmOrchconfig, 'authorization-orchconfig': cmOrchconfig,
      // The service account token controller signs with the API server's key; the root CA
      // publisher hands pods the CA that signed the API server's serving certificate.
      'service-account-private-key-file': apiConfig.serviceAccounts?.signingKeyFile ?? join(apiConfig.certDir, GENERATED_KEY_FILE),
      'root-ca-file': join(apiConfig.certDir, 'ca.crt'),
    };
    const cmArgs = mergeDaemonArgs('controller-manager', cmDefaults, o.controllerManagerArgs);
    const cm = await parseCommandLine('controller-manager', controllerManagerOptions, cmArgs, setByUpOnly(cmDefaults, o.controllerManagerArgs));
    checkNames('controller-manager', cm.options.values, nameSetId);
    controllerManager = new ControllerManager(controllerManagerConfig(cm.options.values, o.version));
    await controllerManager.start();
    cmRun = controllerManager.run();

    const agentDefaults = {
      orchconfig: agentOrchconfig,
      'root-dir': join(o.dataDir, 'agent'),
      'cert-dir': join(o.dataDir, 'agent', 'pki'),
      'hostname-override': nodeName,
      // orch up is the all-in-one development setup: it runs on hosts with cgroup v1 or swap too.
      'fail-cgroupv1': 'false',
      'fail-swap-on': 'false',
      names: nameSetId,
    };
    const agentArgs = mergeDaemonArgs('agent', agentDefaults, o.agentArgs);
    const agentCli = await parseCommandLine('agent', agentOptions, agentArgs, setByUpOnly(agentDefaults, o.agentArgs));
    checkNames('agent', agentCli.options.values, nameSetId);
    const loaded = await loadAgentConfiguration({flags: agentCli.options});
    agent = new Agent(loaded, await nodeStatusDeps(loaded, o.version));
    await agent.start();

    const message = `orch is up. Use it with: kubectl --kubeconfig ${apiConfig.orchconfigPath} get nodes`;
    if (terminal) log.info(message);
    else process.stderr.write(message + '\n');

    const outcome = await Promise.race([stopping.then(() => 'signal' as const), cmRun as Promise<'lost' | 'stopped'>]);
    if (outcome === 'lost') log.error('The controller manager lost its lease; stopping');
  } finally {
    // Stop in order: the agent, the controller manager, then the API server's shutdown sequence.
    await agent?.stop().catch((error) => log.error('Agent stop failed', 'err', error));
    await controllerManager?.stop();
    // Its leader election releases the lease while the API server still answers.
    await cmRun?.catch(() => undefined);
    await controllerManager?.close();
    await apiserver.stop();
    clearInterval(timer);
    if (emitter) {
      emitter.update(snapshot());
      await new Promise((r) => setTimeout(r, 300));
      emitter.close();
      dashboard?.unmount();
      configureKlog({out: (l) => process.stderr.write(l), err: (l) => process.stderr.write(l)});
    }
  }
  log.info('Stopped');
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
