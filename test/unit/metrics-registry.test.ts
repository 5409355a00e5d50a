/** The shared metric framework rules (src/daemons/shared/metrics): hiding, disabling, label allow-lists, option validation. */
import {describe, expect, it} from '@jest/globals';
import {MetricsRegistry, isHidden, parseAllowLists, validateMetricsOptions} from '../../src/daemons/shared/metrics/index.js';

const current = {major: 1, minor: 36};

describe('metrics registry', () => {
  it('hides metrics deprecated before the current minor, unless hidden ones are shown', async () => {
    expect(isHidden('1.35.0', current)).toBe(true);
    expect(isHidden('1.36.0', current)).toBe(false);
    const hiding = new MetricsRegistry({showHidden: false, disabled: new Set(), allowLists: new Map()}, current);
    hiding.gauge({name: 'old_metric', help: 'Old.', deprecatedVersion: '1.34.0'}).set(1);
    hiding.gauge({name: 'fresh_metric', help: 'Fresh.', deprecatedVersion: '1.36.0'}).set(2);
    const text = await hiding.metrics();
    expect(text).not.toContain('old_metric');
    expect(text).toContain('# HELP fresh_metric [ALPHA] (Deprecated since 1.36.0) Fresh.');
    expect(text).toContain('hidden_metrics_total 1');
    const showing = new MetricsRegistry({showHidden: true, disabled: new Set(), allowLists: new Map()}, current);
    showing.gauge({name: 'old_metric', help: 'Old.', deprecatedVersion: '1.34.0'}).set(1);
    expect(await showing.metrics()).toContain('old_metric 1');
  });

  it('never exports disabled metrics, while their objects keep working', async () => {
    const r = new MetricsRegistry({showHidden: true, disabled: new Set(['quiet_total']), allowLists: new Map()}, current);
    const quiet = r.counter({name: 'quiet_total', help: 'Quiet.'});
    quiet.inc();
    expect(await r.metrics()).not.toContain('quiet_total');
    expect(r.isExported('quiet_total')).toBe(false);
    expect(await r.metrics()).toContain('disabled_metrics_total 1');
  });

  it('records label values outside the allow-list as "unexpected", by object or position', async () => {
    const allowLists = parseAllowLists({"requests_total,verb": "'GET,LIST'"});
    const r = new MetricsRegistry({showHidden: false, disabled: new Set(), allowLists}, current);
    const c = r.counter({name: 'requests_total', help: 'Requests.', labelNames: ['verb', 'code']});
    c.inc({verb: 'GET', code: '200'});
    c.inc({verb: 'PATCH', code: '200'});
    c.labels('DELETE', '404').inc();
    const text = await r.metrics();
    expect(text).toContain('requests_total{verb="GET",code="200"} 1');
    expect(text).toContain('requests_total{verb="unexpected",code="200"} 1');
    expect(text).toContain('requests_total{verb="unexpected",code="404"} 1');
    expect(text).toContain('cardinality_enforcement_unexpected_categorizations_total 2');
  });

  it("validates the options with upstream's messages", () => {
    expect(validateMetricsOptions({showHiddenMetricsForVersion: '1.35'}, current)).toEqual([]);
    expect(validateMetricsOptions({showHiddenMetricsForVersion: '1.34'}, current)).toEqual([
      "--show-hidden-metrics-for-version must be omitted or have the value '1.35'. Only the previous minor version is allowed",
    ]);
    expect(validateMetricsOptions({disabledMetrics: ['ok_name', '9bad']}, current)[0]).toContain('got "9bad"');
    expect(validateMetricsOptions({allowMetricLabels: {'metric,label': 'a'}}, current)).toEqual([]);
    expect(validateMetricsOptions({allowMetricLabels: {metric: 'a'}}, current)[0]).toContain('--allow-metric-labels must have a list of kv pair');
  });
});
