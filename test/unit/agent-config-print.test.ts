import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { agentOptions } from '../../src/options/agent.js';
import { resolveOptions } from '../../src/options/resolve.js';
import { formatAgentConfiguration, loadAgentConfiguration } from '../../src/daemons/agent/config/index.js';

const HEADER = 'apiVersion: agent.config.orch.io/v1beta1\nkind: AgentConfiguration\n';

async function loadFrom(text: string, raw: Record<string, string | string[]> = {}) {
  return loadAgentConfiguration({
    configFile: '/cfg/agent.yaml',
    flags: resolveOptions('agent', agentOptions, raw),
    readFile: async () => text,
    readdir: async () => [],
  });
}

describe('--print-config', () => {
  it('prints YAML with apiVersion and kind first, then every field sorted', async () => {
    const { config } = await loadFrom(`${HEADER}syncFrequency: 90s\nmaxPods: 12\n`, { 'cluster-dns': ['10.0.0.10'] });
    const text = formatAgentConfiguration(config, 'yaml');
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['apiVersion: agent.config.orch.io/v1beta1', 'kind: AgentConfiguration']);
    const topLevelKeys = lines.slice(2).filter((l) => /^[A-Za-z]/.test(l)).map((l) => l.split(':')[0]);
    expect(topLevelKeys).toEqual([...topLevelKeys].sort());
    expect(text).toContain('syncFrequency: 1m30s\n');
    expect(text).toContain('maxPods: 12\n');
    expect(text).toContain('clusterDNS:\n  - 10.0.0.10\n');
    expect(text).toContain('evictionHard:\n  imagefs.available: 15%\n');
  });

  it('prints JSON with the same content', async () => {
    const { config } = await loadFrom(`${HEADER}maxPods: 12\n`);
    const json = formatAgentConfiguration(config, 'json');
    expect(json.startsWith('{\n  "apiVersion": "agent.config.orch.io/v1beta1",\n  "kind": "AgentConfiguration",\n')).toBe(true);
    expect(JSON.parse(json)).toEqual(parse(formatAgentConfiguration(config, 'yaml')));
  });

  it.each(['yaml', 'json'] as const)('the printed %s is itself a configuration file that loads to the same result', async (format) => {
    const first = await loadFrom(
      `${HEADER}registerWithTaints:\n- key: a\n  value: b\n  effect: NoSchedule\nstaticPodURLHeader:\n  X-A: [one, two]\nevictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: 1m\n`,
      { 'feature-gates': ['X=true'] },
    );
    const printed = formatAgentConfiguration(first.config, format);
    const second = await loadFrom(printed);
    expect(second.config).toEqual(first.config);
  });

  it('quotes strings YAML would otherwise read as other types', async () => {
    const { config } = await loadFrom(`${HEADER}clusterDomain: "true"\n`);
    expect(parse(formatAgentConfiguration(config, 'yaml')).clusterDomain).toBe('true');
  });
});
