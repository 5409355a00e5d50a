/**
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook (upstream's webhook/mutating and
 * webhook/validating plugins): the configurations of their kind watched into memory, the requests
 * they apply to sent to their webhooks. Writes of webhook configurations and validating policies
 * are never sent (a broken webhook must not block its own repair). Until the first list of
 * configurations has arrived a request waits (up to 10 s, then is refused), as upstream's
 * WaitForReady.
 */
import {builtinResources} from '../../../../../api/resources.js';
import {names} from '../../../../../api/names.js';
import {forbidden} from '../../../../../api/status.js';
import {fromStorage, toStorage} from '../../../rest/conversion.js';
import {resolveServiceEndpoint} from '../../../rest/service-resolver.js';
import {labelsOf} from '../../../rest/objects.js';
import type {Clock} from '../../../../shared/clock.js';
import type {AdmissionAttributes, AdmissionPlugin, AdmissionPluginContext} from '../../interfaces.js';
import {loadCredentialsResolver, parseWebhookAdmissionConfiguration} from './authentication.js';
import {WebhookClient, type WebhookCaller} from './client.js';
import {kindOf, WebhookDispatcher} from './dispatcher.js';
import {isExemptConfigurationKind} from './rules.js';
import {WebhookSource} from './source.js';

const READY_TIMEOUT_MS = 10_000;
const READY_POLL_MS = 100;

export class AdmissionWebhookPlugin implements AdmissionPlugin {
  readonly name: string;

  constructor(
    private readonly mutating: boolean,
    /** The configurations in effect (read by tests to know a written configuration has arrived). */
    readonly source: WebhookSource,
    private readonly dispatcher: WebhookDispatcher,
    private readonly clock: Pick<Clock, 'now'> = {now: () => Date.now()},
  ) {
    this.name = mutating ? 'MutatingAdmissionWebhook' : 'ValidatingAdmissionWebhook';
  }

  private async ready(a: AdmissionAttributes): Promise<void> {
    const deadline = this.clock.now() + READY_TIMEOUT_MS;
    while (!this.source.synced) {
      if (this.clock.now() >= deadline) throw forbidden({group: a.resource.group, resource: a.resource.plural}, a.name, 'not yet ready to handle request');
      await new Promise((r) => setTimeout(r, READY_POLL_MS));
    }
  }

  private async dispatch(a: AdmissionAttributes): Promise<void> {
    const kind = kindOf(a.resource, a.subresource);
    if (isExemptConfigurationKind(kind.group, kind.kind)) return;
    await this.ready(a);
    const hooks = this.source.webhooks();
    if (hooks.length === 0) return;
    if (this.mutating) await this.dispatcher.mutate(a, hooks);
    else await this.dispatcher.validate(a, hooks);
  }

  admit(a: AdmissionAttributes): Promise<void> | void {
    if (this.mutating) return this.dispatch(a);
  }

  validate(a: AdmissionAttributes): Promise<void> | void {
    if (!this.mutating) return this.dispatch(a);
  }

  close(): void {
    this.source.stop();
    this.dispatcher.close();
  }
}

/** The dispatcher over the server's objects: namespaces, services and endpoints read through `context.objects`. */
export function dispatcherFor(context: AdmissionPluginContext, caller: WebhookCaller): WebhookDispatcher {
  const {objects} = context;
  return new WebhookDispatcher({
    caller,
    namespaceLabels: async (name) => {
      const namespace = await objects.get('', 'namespaces', '', name);
      return namespace ? labelsOf(namespace) : undefined;
    },
    resources: () => context.resources?.() ?? builtinResources(),
    // Same stored resource: through the stored shape (HPA v1/v2, events); custom resources share one shape.
    convert: (object, from, to) => {
      const stored = toStorage(from, object);
      const out = fromStorage(to, stored);
      return out === stored ? {...out, apiVersion: to.group ? `${to.group}/${to.version}` : to.version} : out;
    },
    log: (message, ...kv) => context.log(message, ...kv),
  });
}

/** The factory the registry lists for both plugins. */
export async function createAdmissionWebhookPlugin(context: AdmissionPluginContext, mutating: boolean): Promise<AdmissionWebhookPlugin> {
  const name = mutating ? 'MutatingAdmissionWebhook' : 'ValidatingAdmissionWebhook';
  const where = context.configurationSource ? `${context.configurationSource}: ` : '';
  let credentials;
  try {
    const {kubeConfigFile} = parseWebhookAdmissionConfiguration(context.configuration);
    credentials = await loadCredentialsResolver(kubeConfigFile);
  } catch (error) {
    throw new Error(`${where}plugin ${name}: ${(error as Error).message}`);
  }
  const {objects, watch} = context;
  if (!watch) throw new Error(`plugin ${name}: the server gives the admission plugins no watch of their configuration objects`);
  const resolveService = async (namespace: string, service: string, port: number) =>
    resolveServiceEndpoint(namespace, service, port, await objects.get('', 'services', namespace, service), await objects.get('', 'endpoints', namespace, service));
  const source = new WebhookSource(mutating);
  const resource = mutating ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
  source.attach(watch(names().groups.admissionregistration, resource, {apply: (o) => source.apply(o), remove: (o) => source.remove(o)}));
  return new AdmissionWebhookPlugin(mutating, source, dispatcherFor(context, new WebhookClient(credentials, resolveService)), context.clock);
}
