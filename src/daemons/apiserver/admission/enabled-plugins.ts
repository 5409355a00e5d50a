/**
 * Which admission plugins run, from the three options, as upstream's AdmissionOptions
 * (enabledPluginNames and kube-apiserver's computePluginNames for the deprecated flag): the
 * default set plus `--enable-admission-plugins` minus `--disable-admission-plugins`; a given
 * `--admission-control` replaces the set by its list (given empty, `--admission-control=`, it
 * turns every plugin off). The result is in upstream's execution order whatever the order of the
 * names given. Pure: the names were validated by src/options/rules.ts.
 */
import {ADMISSION_PLUGIN_ORDER, DEFAULT_ON_ADMISSION_PLUGINS, type AdmissionPluginName} from '../../../api/admission-plugins.js';

export interface AdmissionSelection {
  enable?: readonly string[];
  disable?: readonly string[];
  /** `--admission-control`: undefined when not given. */
  admissionControl?: readonly string[];
}

export function enabledAdmissionPlugins(selection: AdmissionSelection): AdmissionPluginName[] {
  if (selection.admissionControl !== undefined) {
    const listed = new Set(selection.admissionControl);
    return ADMISSION_PLUGIN_ORDER.filter((name) => listed.has(name));
  }
  const enabled = new Set(selection.enable ?? []);
  const disabled = new Set(selection.disable ?? []);
  return ADMISSION_PLUGIN_ORDER.filter((name) => !disabled.has(name) && (enabled.has(name) || DEFAULT_ON_ADMISSION_PLUGINS.has(name)));
}
