import { describe, expect, it } from '@jest/globals';
import { agentOptions } from '../../src/options/agent.js';
import { type RawFlags, resolveOptions } from '../../src/options/resolve.js';
import { AgentConfigError, type DirectoryEntry, loadAgentConfiguration } from '../../src/daemons/agent/config/index.js';

/** An in-memory file tree: absolute path -> content. Directories are implied by the paths. */
function memoryFs(files: Record<string, string>) {
  return {
    readFile: async (path: string) => {
      if (!(path in files)) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return files[path];
    },
    readdir: async (dir: string): Promise<DirectoryEntry[]> => {
      const names = new Map<string, boolean>();
      for (const path of Object.keys(files)) {
        if (!path.startsWith(`${dir}/`)) continue;
        const [name, ...rest] = path.slice(dir.length + 1).split('/');
        names.set(name, rest.length > 0);
      }
      if (names.size === 0) throw new Error(`ENOENT: no such file or directory, scandir '${dir}'`);
      // Deliberately unsorted, so the loader's own ordering is what the tests see.
      return [...names].reverse().map(([name, isDirectory]) => ({ name, isDirectory }));
    },
  };
}

const HEADER = 'apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\n';
const flags = (raw: RawFlags = {}) => resolveOptions('agent', agentOptions, raw);

const hasDropIns = (files: Record<string, string>) => Object.keys(files).some((p) => p.startsWith('/etc/agent/conf.d/'));

async function load(files: Record<string, string>, raw: RawFlags = {}, withFile = true, withDir = hasDropIns(files)) {
  return loadAgentConfiguration({
    configFile: withFile && '/etc/agent/config.yaml' in files ? '/etc/agent/config.yaml' : undefined,
    configDir: withDir ? '/etc/agent/conf.d' : undefined,
    flags: flags(raw),
    ...memoryFs(files),
  });
}

async function loadError(files: Record<string, string>, raw: RawFlags = {}): Promise<string> {
  try {
    await load(files, raw);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('precedence: default < file < flag < drop-in', () => {
  // Each row sets maxPods in some layers; the highest layer present wins and is named as the source.
  const rows: Array<{ name: string; file?: number; flag?: number; dropIn?: number; value: number; source: string }> = [
    { name: 'nothing set', value: 110, source: 'default' },
    { name: 'file only', file: 20, value: 20, source: 'file' },
    { name: 'flag only', flag: 30, value: 30, source: 'flag' },
    { name: 'file and flag', file: 20, flag: 30, value: 30, source: 'flag' },
    { name: 'file and drop-in', file: 20, dropIn: 40, value: 40, source: 'drop-in:/etc/agent/conf.d/10.conf' },
    { name: 'flag and drop-in', flag: 30, dropIn: 40, value: 40, source: 'drop-in:/etc/agent/conf.d/10.conf' },
    { name: 'all three', file: 20, flag: 30, dropIn: 40, value: 40, source: 'drop-in:/etc/agent/conf.d/10.conf' },
  ];
  it.each(rows)('$name', async ({ file, flag, dropIn, value, source }) => {
    const files: Record<string, string> = { '/etc/agent/conf.d/README': 'not a drop-in' };
    if (file !== undefined) files['/etc/agent/config.yaml'] = `${HEADER}maxPods: ${file}\n`;
    if (dropIn !== undefined) files['/etc/agent/conf.d/10.conf'] = `${HEADER}maxPods: ${dropIn}\n`;
    const loaded = await load(files, flag === undefined ? {} : { 'max-pods': String(flag) });
    expect(loaded.config.maxPods).toBe(value);
    expect(loaded.sources.maxPods).toBe(source);
    expect(loaded.options['max-pods']).toBe(value);
  });

  it('tracks the source of each field separately, nested fields by dotted path', async () => {
    const loaded = await load(
      {
        '/etc/agent/config.yaml': `${HEADER}syncFrequency: 2m\nauthentication:\n  webhook:\n    cacheTTL: 1m\n`,
        '/etc/agent/conf.d/a.conf': `${HEADER}authorization:\n  mode: Webhook\n`,
      },
      { 'file-check-frequency': '5s', orchconfig: '/x' },
    );
    expect(loaded.sources).toMatchObject({
      syncFrequency: 'file',
      'authentication.webhook.cacheTTL': 'file',
      'authentication.webhook.enabled': 'default',
      fileCheckFrequency: 'flag',
      'authorization.mode': 'drop-in:/etc/agent/conf.d/a.conf',
      'authorization.webhook.cacheAuthorizedTTL': 'default',
      port: 'default',
    });
    expect(loaded.config.syncFrequency).toBe('2m0s');
    expect(loaded.config.authentication?.webhook).toEqual({ cacheTTL: '1m0s', enabled: false });
    expect(loaded.config.fileCheckFrequency).toBe('5s');
    expect(loaded.options['sync-frequency']).toEqual({ ms: 120000, text: '2m0s' });
  });

  it('flags given only by their default do not override the file', async () => {
    const loaded = await load({ '/etc/agent/config.yaml': `${HEADER}port: 11250\n` });
    expect(loaded.config.port).toBe(11250);
    expect(loaded.sources.port).toBe('file');
  });

  it('--feature-gates merges per gate with the file; other maps are replaced by the flag', async () => {
    const loaded = await load(
      {
        '/etc/agent/config.yaml': `${HEADER}featureGates:\n  A: true\n  B: true\nsystemReserved:\n  cpu: 100m\n  memory: 1Gi\n`,
      },
      { 'feature-gates': ['B=false,C=true'], 'system-reserved': ['memory=2Gi'] },
    );
    expect(loaded.config.featureGates).toEqual({ A: true, B: false, C: true });
    expect(loaded.config.systemReserved).toEqual({ memory: '2Gi' });
  });
});

describe('defaults', () => {
  it('come from the option table in file form, and from upstream for fields without a flag', async () => {
    const { config, sources } = await load({}, {}, false, false);
    expect(config).toMatchObject({
      apiVersion: 'agent.config.orch.io/v1beta1',
      kind: 'AgentConfiguration',
      syncFrequency: '1m0s',
      streamingConnectionIdleTimeout: '4h0m0s',
      cpuCFSQuotaPeriod: '100ms',
      containerLogMaxSize: '10Mi',
      enforceNodeAllocatable: ['pods'],
      readOnlyPort: 10255,
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%', 'imagefs.inodesFree': '5%' },
      nodeLeaseDurationSeconds: 40,
      nodeStatusReportFrequency: '5m0s',
      logging: { format: 'text', flushFrequency: '5s', verbosity: 0 },
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false, cacheTTL: '2m0s' } },
    });
    expect(config.staticPodPath).toBeUndefined();
    expect(Object.values(sources).every((s) => s === 'default')).toBe(true);
  });

  it('nodeStatusReportFrequency follows nodeStatusUpdateFrequency when that one is set', async () => {
    const loaded = await load({}, { 'node-status-update-frequency': '20s' }, false, false);
    expect(loaded.config.nodeStatusReportFrequency).toBe('20s');
  });
});

describe('drop-ins', () => {
  it('reads every .conf file recursively, in lexical order of the full path, ignoring other files', async () => {
    const loaded = await load({
      '/etc/agent/conf.d/20-b.conf': `${HEADER}maxPods: 20\nclusterDomain: b.local\n`,
      '/etc/agent/conf.d/10-a.conf': `${HEADER}maxPods: 10\nclusterDomain: a.local\nsyncFrequency: 10s\n`,
      // A subdirectory sorts by its own name and is walked in place: 15-sub/ comes between 10 and 20.
      '/etc/agent/conf.d/15-sub/99.conf': `${HEADER}syncFrequency: 15s\nclusterDomain: sub.local\n`,
      '/etc/agent/conf.d/30-c.conf.bak': `${HEADER}maxPods: 999\n`,
      '/etc/agent/conf.d/40-d.yaml': `${HEADER}maxPods: 999\n`,
      '/etc/agent/conf.d/50-notes.txt': 'not yaml: [',
    });
    expect(loaded.config.maxPods).toBe(20);
    expect(loaded.config.clusterDomain).toBe('b.local');
    expect(loaded.config.syncFrequency).toBe('15s');
    expect(loaded.sources.syncFrequency).toBe('drop-in:/etc/agent/conf.d/15-sub/99.conf');
  });

  it('merges maps key by key, replaces lists, and null removes', async () => {
    const loaded = await load({
      '/etc/agent/config.yaml': `${HEADER}clusterDNS: [10.0.0.1, 10.0.0.2]\nevictionHard:\n  memory.available: 200Mi\n  nodefs.available: 5%\nclusterDomain: cluster.local\n`,
      '/etc/agent/conf.d/a.conf': `${HEADER}clusterDNS: [10.0.0.3]\nevictionHard:\n  nodefs.available: null\n  pid.available: 10%\nclusterDomain: null\n`,
    });
    expect(loaded.config.clusterDNS).toEqual(['10.0.0.3']);
    expect(loaded.config.evictionHard).toEqual({ 'memory.available': '200Mi', 'pid.available': '10%' });
    expect(loaded.config.clusterDomain).toBeUndefined();
    expect(loaded.sources.clusterDomain).toBeUndefined();
  });

  it('a null field takes its default again', async () => {
    const loaded = await load({
      '/etc/agent/config.yaml': `${HEADER}maxPods: 20\n`,
      '/etc/agent/conf.d/a.conf': `${HEADER}maxPods: null\n`,
    });
    expect(loaded.config.maxPods).toBe(110);
    expect(loaded.sources.maxPods).toBe('default');
  });

  it('keeps sibling nested fields a drop-in does not name', async () => {
    const loaded = await load(
      {
        '/etc/agent/config.yaml': `${HEADER}authorization:\n  mode: Webhook\n  webhook:\n    cacheAuthorizedTTL: 1m\n`,
        '/etc/agent/conf.d/a.conf': `${HEADER}authorization:\n  mode: AlwaysAllow\n`,
      },
      { orchconfig: '/x' },
    );
    expect(loaded.config.authorization).toEqual({ mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTL: '1m0s', cacheUnauthorizedTTL: '30s' } });
  });

  it('JSON drop-ins work too', async () => {
    const loaded = await load({
      '/etc/agent/conf.d/a.conf': JSON.stringify({ apiVersion: 'agent.config.orch.io/v1beta1', kind: 'AgentConfiguration', registerNode: false }),
    });
    expect(loaded.config.registerNode).toBe(false);
  });

  it('a missing directory is an error naming it', async () => {
    await expect(load({}, {}, true, true)).rejects.toThrow('failed to walk through agent dropin directory "/etc/agent/conf.d"');
  });
});

describe('file paths', () => {
  it('relative paths in the file resolve against its directory', async () => {
    const loaded = await load({
      '/etc/agent/config.yaml': `${HEADER}staticPodPath: manifests\ntlsCertFile: /abs/cert.pem\ntlsPrivateKeyFile: ./key.pem\nauthentication:\n  x509:\n    clientCAFile: ../pki/ca.crt\n`,
    });
    expect(loaded.config.staticPodPath).toBe('/etc/agent/manifests');
    expect(loaded.config.tlsCertFile).toBe('/abs/cert.pem');
    expect(loaded.config.tlsPrivateKeyFile).toBe('/etc/agent/key.pem');
    expect(loaded.config.authentication?.x509?.clientCAFile).toBe('/etc/pki/ca.crt');
  });

  it('relative paths in a drop-in resolve against the drop-in\'s directory', async () => {
    const loaded = await load({ '/etc/agent/conf.d/sub/a.conf': `${HEADER}staticPodPath: pods\n` });
    expect(loaded.config.staticPodPath).toBe('/etc/agent/conf.d/sub/pods');
  });
});

describe('eviction defaults', () => {
  it('an evictionHard in the file replaces the default map', async () => {
    const loaded = await load({ '/etc/agent/config.yaml': `${HEADER}evictionHard:\n  memory.available: 1Gi\n` });
    expect(loaded.config.evictionHard).toEqual({ 'memory.available': '1Gi' });
  });
  it('mergeDefaultEvictionSettings keeps the defaults of signals it leaves out', async () => {
    const loaded = await load({
      '/etc/agent/config.yaml': `${HEADER}mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 1Gi\n`,
    });
    expect(loaded.config.evictionHard).toMatchObject({ 'memory.available': '1Gi', 'nodefs.available': '10%', 'imagefs.available': '15%' });
  });
});

describe('strict decoding', () => {
  const rows: Array<{ name: string; text: string; message: string }> = [
    { name: 'unknown top-level field', text: `${HEADER}maxPod: 3\n`, message: 'strict decoding error: unknown field "maxPod"' },
    { name: 'upstream-only field name', text: `${HEADER}kubeAPIQPS: 3\n`, message: 'unknown field "kubeAPIQPS"' },
    { name: 'unknown nested field', text: `${HEADER}authentication:\n  webhook:\n    ttl: 1m\n`, message: 'unknown field "authentication.webhook.ttl"' },
    { name: 'string for a number', text: `${HEADER}maxPods: lots\n`, message: 'field "maxPods": expected a number, got "lots"' },
    { name: 'number out of range', text: `${HEADER}port: 70000\n`, message: 'field "port": invalid value "70000"' },
    { name: 'bad duration', text: `${HEADER}syncFrequency: 10 minutes\n`, message: 'field "syncFrequency": invalid value "10 minutes": not a duration' },
    { name: 'bad eviction signal', text: `${HEADER}evictionHard:\n  memory.free: 1Gi\n`, message: 'unsupported eviction signal memory.free' },
    { name: 'bad taint effect', text: `${HEADER}registerWithTaints:\n- key: a\n  effect: Sometimes\n`, message: 'invalid taint effect: Sometimes, unsupported taint effect' },
    { name: 'object for a nested object', text: `${HEADER}authentication: yes\n`, message: 'field "authentication": expected an object' },
    { name: 'bool as string', text: `${HEADER}registerNode: "false"\n`, message: 'field "registerNode": expected true or false, got "false"' },
    { name: 'not an enum value', text: `${HEADER}cgroupDriver: docker\n`, message: 'field "cgroupDriver": invalid value "docker": not one of the accepted values; expected one of cgroupfs, systemd' },
    { name: 'duplicate key', text: `${HEADER}maxPods: 1\nmaxPods: 2\n`, message: 'Map keys must be unique' },
  ];
  it.each(rows)('$name', async ({ text, message }) => {
    const error = await loadError({ '/etc/agent/config.yaml': text });
    expect(error).toContain('failed to load agent config file, path: /etc/agent/config.yaml, error: ');
    expect(error).toContain(message);
  });

  it('reports every unknown field at once', async () => {
    const error = await loadError({ '/etc/agent/config.yaml': `${HEADER}a: 1\nb: 2\n` });
    expect(error).toContain('strict decoding error: unknown field "a", unknown field "b"');
  });

  const typeMeta: Array<{ name: string; head: string; given: string }> = [
    { name: 'upstream kind and group', head: 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n', given: 'kind "KubeletConfiguration" and apiVersion "kubelet.config.k8s.io/v1beta1"' },
    { name: 'missing kind', head: 'apiVersion: agent.config.orch.io/v1beta1\n', given: 'kind (missing) and apiVersion "agent.config.orch.io/v1beta1"' },
    { name: 'other version', head: 'apiVersion: agent.config.orch.io/v1\nkind: AgentConfiguration\n', given: 'apiVersion "agent.config.orch.io/v1"' },
  ];
  it.each(typeMeta)('refuses $name, naming the accepted kind and apiVersion', async ({ head, given }) => {
    const error = await loadError({ '/etc/agent/config.yaml': `${head}maxPods: 3\n` });
    expect(error).toContain('path: /etc/agent/config.yaml');
    expect(error).toContain(given);
    expect(error).toContain('expected kind "AgentConfiguration" and apiVersion "agent.config.orch.io/v1beta1"');
  });

  it('a bad drop-in is named in the error', async () => {
    const error = await loadError({ '/etc/agent/conf.d/x/bad.conf': `${HEADER}nope: 1\n` });
    expect(error).toBe('failed to load agent dropin file, path: /etc/agent/conf.d/x/bad.conf, error: strict decoding error: unknown field "nope"');
  });

  it('a missing --config file is an error naming it', async () => {
    await expect(
      loadAgentConfiguration({ configFile: '/nowhere/config.yaml', flags: flags(), ...memoryFs({}) }),
    ).rejects.toThrow('failed to load agent config file, path: /nowhere/config.yaml');
  });
});

describe('validation of the merged configuration', () => {
  it('applies the image GC threshold rule across layers, naming the fields', async () => {
    const error = await loadError(
      { '/etc/agent/config.yaml': `${HEADER}imageGCHighThresholdPercent: 70\n` },
      { 'image-gc-low-threshold': '75' },
    );
    expect(error).toContain('failed to validate agent configuration, error: ');
    expect(error).toContain('imageGCLowThresholdPercent (--image-gc-low-threshold) (75) must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) (70)');
  });

  it('refuses runOnce with an explicit enableServer from the file', async () => {
    const error = await loadError({ '/etc/agent/config.yaml': `${HEADER}runOnce: true\nenableServer: true\n` });
    expect(error).toContain('runOnce (--runonce) cannot be used with enableServer (--enable-server)=true');
  });

  it('accepts runOnce alone (enableServer only by default)', async () => {
    const loaded = await load({ '/etc/agent/config.yaml': `${HEADER}runOnce: true\n` }, {}, true, false);
    expect(loaded.config.runOnce).toBe(true);
  });

  it('checks soft thresholds against their grace periods after the merge', async () => {
    const error = await loadError({
      '/etc/agent/config.yaml': `${HEADER}evictionSoft:\n  memory.available: 1Gi\n`,
    });
    expect(error).toContain('needs a grace period');
    const loaded = await load({
      '/etc/agent/config.yaml': `${HEADER}evictionSoft:\n  memory.available: 1Gi\n`,
      '/etc/agent/conf.d/a.conf': `${HEADER}evictionSoftGracePeriod:\n  memory.available: 90s\n`,
    });
    expect(loaded.config.evictionSoftGracePeriod).toEqual({ 'memory.available': '1m30s' });
  });

  it.each([
    ['shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s', 'shutdownGracePeriodCriticalPods (20s) must be <= shutdownGracePeriod (10s)'],
    ['nodeLeaseDurationSeconds: 0', 'field "nodeLeaseDurationSeconds": invalid value "0": must be at least 1'],
    ['memoryThrottlingFactor: 1.5', 'memoryThrottlingFactor (1.5) must be greater than 0 and at most 1'],
    ['maxParallelImagePulls: 3\nserializeImagePulls: true', 'maxParallelImagePulls cannot be larger than 1 unless serializeImagePulls'],
  ])('checks config-only fields: %s', async (fields, message) => {
    const error = await loadError({ '/etc/agent/config.yaml': `${HEADER}${fields}\n` });
    expect(error).toContain(message);
  });

  it('maxParallelImagePulls above 1 turns the serializeImagePulls default off', async () => {
    const loaded = await load({ '/etc/agent/config.yaml': `${HEADER}maxParallelImagePulls: 3\n` });
    expect(loaded.config.serializeImagePulls).toBe(false);
  });

  it('refuses reserved node labels from the command line with the seed list', async () => {
    // resolveOptions has its own node-label rule; the loader checks again with upstream's message.
    const resolved = flags();
    const values = { ...resolved.values, 'node-labels': { 'node-role.orch.io/worker': '', team: 'a' } };
    const attempt = loadAgentConfiguration({ flags: { values, explicit: new Set(['node-labels']) }, ...memoryFs({}) });
    await expect(attempt).rejects.toThrow(
      "failed to validate agent configuration, error: unknown 'orch.io' labels specified with --node-labels: [node-role.orch.io/worker]",
    );
  });

  it('decodes taints, reserved memory and vmodule into typed option values', async () => {
    const loaded = await load(
      {
        '/etc/agent/config.yaml':
          `${HEADER}registerWithTaints:\n- key: dedicated\n  value: gpu\n  effect: NoSchedule\n- key: spot\n  effect: NoExecute\n` +
          `logging:\n  vmodule:\n  - filePattern: pods*\n    verbosity: 4\n` +
          `reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 100Mi\n`,
      },
      {},
      true,
      false,
    );
    expect(loaded.options['register-with-taints']).toEqual([
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'spot', effect: 'NoExecute' },
    ]);
    expect(loaded.options.vmodule).toEqual([{ pattern: 'pods*', level: 4 }]);
    expect(loaded.config.registerWithTaints).toEqual([
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'spot', effect: 'NoExecute' },
    ]);
  });

  it('warns about fields set in files whose option has no effect yet', async () => {
    const loaded = await load({ '/etc/agent/config.yaml': `${HEADER}hairpinMode: none\n` }, {}, true, false);
    expect(loaded.warnings.join('\n')).toContain('hairpinMode');
  });
});
