/**
 * The PodSecurity admission plugin (validating): upstream's plugin/pkg/admission/security/podsecurity
 * over the decision in ./admission.ts. Warnings go to the response's Warning headers, audit
 * annotations to the request's audit event under `pod-security.<domain>/`, a refusal is thrown.
 */
import type {JsonObject} from '../../../../../patch/types.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../../interfaces.js';
import {appliesTo, PodSecurityAdmission, type PodSecurityDeps} from './admission.js';
import {parsePodSecurityConfiguration, type PodSecurityConfiguration} from './configuration.js';
import {podSecurityAnnotation, type AuditAnnotationKey} from './levels.js';

export const POD_SECURITY = 'PodSecurity';

export class PodSecurity implements AdmissionPlugin {
  readonly name = POD_SECURITY;
  readonly admission: PodSecurityAdmission;

  constructor(configuration: PodSecurityConfiguration, deps: PodSecurityDeps) {
    this.admission = new PodSecurityAdmission(configuration, deps);
  }

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {resource} = attributes;
    if (!appliesTo(resource.group, resource.plural)) return;
    const decision = await this.admission.validate({
      operation: attributes.operation as 'CREATE' | 'UPDATE',
      group: resource.group,
      resource: resource.plural,
      subresource: attributes.subresource,
      namespace: attributes.namespace,
      name: attributes.name,
      object: attributes.object,
      oldObject: attributes.oldObject,
      username: attributes.user.name,
    });
    for (const warning of decision.warnings) attributes.addWarning?.(warning);
    for (const [key, value] of Object.entries(decision.auditAnnotations)) {
      if (value !== undefined) attributes.addAnnotation?.(podSecurityAnnotation(key as AuditAnnotationKey), value);
    }
    if (decision.error) throw decision.error;
  }
}

/** The factory: a bad configuration stops the start with an error naming the plugin, the source and every problem. */
export function createPodSecurity(context: AdmissionPluginContext): PodSecurity {
  let configuration: PodSecurityConfiguration;
  try {
    configuration = parsePodSecurityConfiguration(context.configuration);
  } catch (error) {
    // The source names the file and the plugin (`<file>: plugin PodSecurity`).
    const where = context.configurationSource ?? `admission plugin ${POD_SECURITY}`;
    throw new Error(`${where}: invalid configuration: ${(error as Error).message}`);
  }
  return new PodSecurity(configuration, {
    namespaceLabels: async (name) => {
      const namespace = await context.objects.get('', 'namespaces', '', name);
      if (!namespace) return undefined;
      const labels = (namespace.metadata as JsonObject | undefined)?.labels;
      return (labels && typeof labels === 'object' ? labels : {}) as Record<string, string>;
    },
    listPods: (namespace) => context.objects.list('', 'pods', namespace),
    clock: context.clock,
  });
}
