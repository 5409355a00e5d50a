/**
 * The admission chain from the options: which plugins run and in what order, the configuration
 * file (inline and by path, YAML and JSON, both name sets), building the chain (plugins not built
 * yet, factory errors), and the README keeping the plugin list of src/api/admission-plugins.ts.
 */
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {selectNames} from '../../src/api/names.js';
import {enabledAdmissionPlugins} from '../../src/daemons/apiserver/admission/enabled-plugins.js';
import {readAdmissionConfiguration} from '../../src/daemons/apiserver/admission/config-file.js';
import {buildAdmissionChain} from '../../src/daemons/apiserver/admission/build.js';
import {ADMISSION_PLUGIN_ORDER, DEFAULT_ON_ADMISSION_PLUGINS} from '../../src/api/admission-plugins.js';
import type {AdmissionObjects, AdmissionPluginContext, AdmissionPluginFactory} from '../../src/daemons/apiserver/admission/interfaces.js';
import {systemClock} from '../../src/daemons/shared/clock.js';

const DEFAULTS = ADMISSION_PLUGIN_ORDER.filter((n) => DEFAULT_ON_ADMISSION_PLUGINS.has(n));

describe('enabledAdmissionPlugins', () => {
  it.each([
    ['nothing given: the default set, in order', {}, DEFAULTS],
    ['enable adds, in upstream order whatever the order given', {enable: ['AlwaysDeny', 'AlwaysAdmit']}, ['AlwaysAdmit', ...DEFAULTS, 'AlwaysDeny']],
    ['disable removes', {disable: ['PodSecurity', 'ResourceQuota']}, DEFAULTS.filter((n) => n !== 'PodSecurity' && n !== 'ResourceQuota')],
    ['enable and disable together', {enable: ['NamespaceExists'], disable: ['NamespaceLifecycle']},
      ['NamespaceExists', ...DEFAULTS.filter((n) => n !== 'NamespaceLifecycle')]],
    ['--admission-control replaces the set, ordered', {admissionControl: ['ResourceQuota', 'AlwaysAdmit', 'NamespaceLifecycle']},
      ['AlwaysAdmit', 'NamespaceLifecycle', 'ResourceQuota']],
    ['--admission-control= turns every plugin off', {admissionControl: []}, []],
  ] as const)('%s', (_what, selection, expected) => {
    expect(enabledAdmissionPlugins(selection)).toEqual(expected);
  });
});

describe('readAdmissionConfiguration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
  });
  afterEach(() => {
    rmSync(dir, {recursive: true, force: true});
    selectNames('orch');
  });
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('reads inline configurations and paths relative to the file, YAML or JSON', async () => {
    write('rate.yaml', 'apiVersion: eventratelimit.admission.orch.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Server\n  qps: 5\n  burst: 10\n');
    const file = write('admission.yaml', [
      'apiVersion: apiserver.config.orch.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: EventRateLimit',
      '  path: rate.yaml',
      '- name: PodNodeSelector',
      '  configuration: {podNodeSelectorPluginConfig: {clusterDefaultNodeSelector: "env=prod"}}',
    ].join('\n'));
    const configs = await readAdmissionConfiguration(file);
    expect(configs.get('EventRateLimit')?.configuration).toEqual({
      apiVersion: 'eventratelimit.admission.orch.io/v1alpha1', kind: 'Configuration', limits: [{type: 'Server', qps: 5, burst: 10}],
    });
    expect(configs.get('EventRateLimit')?.source).toContain(`plugin EventRateLimit (${join(dir, 'rate.yaml')})`);
    expect(configs.get('PodNodeSelector')?.configuration).toEqual({podNodeSelectorPluginConfig: {clusterDefaultNodeSelector: 'env=prod'}});

    const json = write('admission.json', JSON.stringify({
      apiVersion: 'apiserver.config.orch.io/v1alpha1', kind: 'AdmissionConfiguration', plugins: [{name: 'EventRateLimit', path: join(dir, 'rate.yaml')}],
    }));
    expect([...(await readAdmissionConfiguration(json)).keys()]).toEqual(['EventRateLimit']);
  });

  it('takes the upstream group under --names kubernetes, and not the other name set', async () => {
    const file = write('a.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n');
    await expect(readAdmissionConfiguration(file)).rejects.toThrow(/apiVersion: Unsupported value: "apiserver.config.k8s.io\/v1"/);
    selectNames('kubernetes');
    expect((await readAdmissionConfiguration(file)).size).toBe(0);
  });

  it.each([
    ['an unknown plugin, listing the known ones', 'plugins:\n- name: NoSuchPlugin\n  configuration: {}\n',
      /admission\.yaml: plugin NoSuchPlugin: unknown admission plugin; known plugins: AlwaysAdmit, AlwaysDeny, /],
    ['a missing path, naming file and plugin', 'plugins:\n- name: EventRateLimit\n  path: missing.yaml\n',
      /admission\.yaml: plugin EventRateLimit: unable to read .*missing\.yaml/],
    ['neither path nor configuration', 'plugins:\n- name: EventRateLimit\n', /plugin EventRateLimit: Required value: one of path or configuration/],
    ['a plugin twice', 'plugins:\n- name: EventRateLimit\n  configuration: {}\n- name: EventRateLimit\n  configuration: {}\n',
      /plugin EventRateLimit: Duplicate value/],
    ['a wrong kind', null, /kind: Unsupported value: "Other"/],
  ])('refuses %s', async (_what, body, message) => {
    const text = body === null
      ? 'apiVersion: apiserver.config.orch.io/v1\nkind: Other\n'
      : `apiVersion: apiserver.config.orch.io/v1\nkind: AdmissionConfiguration\n${body}`;
    const file = write('admission.yaml', text);
    await expect(readAdmissionConfiguration(file)).rejects.toThrow(message);
    await expect(readAdmissionConfiguration(file)).rejects.toThrow(`--admission-control-config-file ${file}`);
  });

  it('refuses a file that is not there or not YAML', async () => {
    await expect(readAdmissionConfiguration(join(dir, 'none.yaml'))).rejects.toThrow(/unable to read the admission control configuration/);
    await expect(readAdmissionConfiguration(write('bad.yaml', 'plugins: [\n'))).rejects.toThrow(/bad\.yaml: not valid YAML or JSON/);
  });
});

describe('buildAdmissionChain', () => {
  const objects = {} as AdmissionObjects;
  const base = {objects, clock: systemClock, log: () => undefined};
  const plugin = (name: string): AdmissionPluginFactory => () => ({name});

  it('builds the plugins in the order given, each with its configuration', async () => {
    const seen: AdmissionPluginContext[] = [];
    const chain = await buildAdmissionChain({
      ...base, warn: () => undefined,
      plugins: ['AlwaysAdmit', 'NamespaceLifecycle'],
      factories: {AlwaysAdmit: (c) => (seen.push(c), {name: 'AlwaysAdmit'}), NamespaceLifecycle: plugin('NamespaceLifecycle')},
      configurations: new Map([['AlwaysAdmit', {configuration: {a: 1}, source: 'f.yaml: plugin AlwaysAdmit'}]]),
    });
    expect(chain.plugins.map((p) => p.name)).toEqual(['AlwaysAdmit', 'NamespaceLifecycle']);
    expect(seen[0].configuration).toEqual({a: 1});
    expect(seen[0].configurationSource).toBe('f.yaml: plugin AlwaysAdmit');
  });

  it('stops on a plugin asked for by name that is not built yet', async () => {
    await expect(buildAdmissionChain({...base, warn: () => undefined, plugins: ['AlwaysDeny'], factories: {}}))
      .rejects.toThrow('admission plugin AlwaysDeny is not built yet');
  });

  it('skips default plugins not built yet with one warning naming them', async () => {
    const warnings: string[] = [];
    const chain = await buildAdmissionChain({
      ...base, warn: (w) => warnings.push(w), plugins: ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota'], factories: {NamespaceLifecycle: plugin('NamespaceLifecycle')},
    });
    expect(chain.plugins.map((p) => p.name)).toEqual(['NamespaceLifecycle']);
    expect(warnings).toEqual(['Admission plugins of the default set not built yet, skipped: LimitRanger, ResourceQuota']);
  });

  it('names the plugin whose factory refuses its configuration, and closes those already built', async () => {
    let closed = false;
    await expect(buildAdmissionChain({
      ...base, warn: () => undefined, plugins: ['AlwaysAdmit', 'EventRateLimit'],
      factories: {AlwaysAdmit: () => ({name: 'AlwaysAdmit', close: () => void (closed = true)}), EventRateLimit: () => {
        throw new Error('limits: Required value');
      }},
    })).rejects.toThrow('admission plugin EventRateLimit: limits: Required value');
    expect(closed).toBe(true);
  });
});

describe('the README', () => {
  it('lists every admission plugin in execution order, the default set marked', () => {
    const readme = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8').replace(/\s+/g, ' ');
    const listed = ADMISSION_PLUGIN_ORDER.map((n) => `${n}${DEFAULT_ON_ADMISSION_PLUGINS.has(n) ? '*' : ''}`).join(', ');
    expect(readme).toContain(`${listed}.`);
  });
});
