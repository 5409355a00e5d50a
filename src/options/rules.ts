/**
 * Cross-option validation: the rules the seeds (and the upstream behaviour they describe) state between
 * options, or about an option's value beyond what its type parser checks.
 *
 * Each rule is one small function over a read-only view of the parsed values; validateOptionRules runs
 * the rules of one program and returns every message, so a user sees all problems at once. Options are
 * referred to by long name; an option absent from `values` counts as unset, so the rules also hold while
 * the option tables are still growing.
 */
import { isIP } from 'node:net';
import type { Program } from './spec.js';
import type { DurationValue } from './duration.js';
import type { Quantity } from './quantity.js';
import type { EvictionThreshold } from './value-eviction.js';
import type { MemoryReservation } from './value-resources.js';
import { type Cidr, type PortRange, parseCidr } from './value-network.js';
import { parseQuantity } from './quantity.js';
import { labelValueErrors, qualifiedNameErrors } from './value-labels.js';
import { NAME_SET_IDS, nameSet, names, type NameSetId } from '../api/names.js';
import { allowedNodeLabelPrefixes, allowedNodeLabels, isAllowedNodeLabel } from '../api/node-labels.js';
import {ADMISSION_PLUGIN_ORDER} from '../api/admission-plugins.js';
import {corsPatternProblems} from './value-cors.js';
import {createSecureContext} from 'node:tls';
import {tlsCurveProblems} from './value-tls.js';

/** Read-only access to the parsed values of one command line. */
class OptionView {
  constructor(
    private readonly values: Record<string, unknown>,
    private readonly explicitlySet: ReadonlySet<string>,
  ) {}

  raw(name: string): unknown {
    return this.values[name];
  }
  /** Whether the option has a non-empty value (from a default or the command line). */
  has(name: string): boolean {
    const value = this.values[name];
    if (value === undefined || value === null || value === '' || value === false) return false;
    if (Array.isArray(value)) return value.length > 0;
    if (typeof value === 'object' && !('ms' in value) && !('text' in value) && !('base' in value)) {
      return Object.keys(value).length > 0;
    }
    return true;
  }
  /** Set to something that has an effect: non-empty, and not a zero number or quantity. */
  isActive(name: string): boolean {
    const value = this.values[name];
    if (value === 0) return false;
    if (value && typeof value === 'object' && (value as Quantity).value === 0) return false;
    return this.has(name);
  }
  /** Whether the user gave the option on the command line. */
  explicit(name: string): boolean {
    return this.explicitlySet.has(name);
  }
  str(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  }
  num(name: string): number | undefined {
    const value = this.values[name];
    return typeof value === 'number' ? value : undefined;
  }
  bool(name: string): boolean | undefined {
    const value = this.values[name];
    return typeof value === 'boolean' ? value : undefined;
  }
  /** A duration in milliseconds. */
  ms(name: string): number | undefined {
    const value = this.values[name] as DurationValue | undefined;
    return value && typeof value === 'object' && typeof value.ms === 'number' ? value.ms : undefined;
  }
  durationText(name: string): string {
    return (this.values[name] as DurationValue).text;
  }
  /** A list option; a plain string counts as a comma-separated list. */
  list(name: string): string[] {
    const value = this.values[name];
    if (Array.isArray(value)) return value.map(String);
    if (typeof value === 'string') return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
    return [];
  }
  /** A repeatable string option may arrive as one string or as a list of strings. */
  entries(name: string): string[] {
    const value = this.values[name];
    if (Array.isArray(value)) return value.map(String);
    return typeof value === 'string' && value !== '' ? [value] : [];
  }
  map<T = string>(name: string): Record<string, T> {
    const value = this.values[name];
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, T>) : {};
  }
  /**
   * Whether a feature gate is on: `--feature-gates` wins (a plain `Name` or any `component:Name`),
   * otherwise the gate's default for the release we follow.
   */
  gate(name: string, enabledByDefault: boolean): boolean {
    const gates = this.map<boolean>('feature-gates');
    if (name in gates) return gates[name];
    const qualified = Object.keys(gates).find((key) => key.endsWith(`:${name}`));
    return qualified === undefined ? enabledByDefault : gates[qualified];
  }
}

type RuleResult = string | readonly string[] | undefined | false;
interface Rule {
  programs: readonly Program[];
  check(o: OptionView): RuleResult;
}

const DAEMONS: readonly Program[] = ['apiserver', 'controller-manager', 'agent'];
const CONTROL_PLANE: readonly Program[] = ['apiserver', 'controller-manager'];

// ---------------------------------------------------------------------------------------------------
// Small rule builders, so each rule below reads as the sentence the seed writes.

/** A numeric option within inclusive bounds (skipped when unset). */
function inRange(programs: readonly Program[], name: string, min: number, max: number, note = ''): Rule {
  return {
    programs,
    check: (o) => {
      const value = o.num(name);
      return value !== undefined && (value < min || value > max)
        ? `--${name} must be between ${min} and ${max}${note}, got ${value}`
        : undefined;
    },
  };
}

function atLeast(programs: readonly Program[], name: string, min: number, what = `at least ${min}`): Rule {
  return {
    programs,
    check: (o) => {
      const value = o.num(name);
      return value !== undefined && value < min ? `--${name} must be ${what}, got ${value}` : undefined;
    },
  };
}

function notNegativeDuration(programs: readonly Program[], name: string): Rule {
  return {
    programs,
    check: (o) => {
      const ms = o.ms(name);
      return ms !== undefined && ms < 0 ? `--${name} must not be negative, got ${o.durationText(name)}` : undefined;
    },
  };
}

/** Two options that only make sense together (a certificate and its key). */
function together(programs: readonly Program[], a: string, b: string): Rule {
  return {
    programs,
    check: (o) =>
      o.has(a) !== o.has(b) ? `--${a} and --${b} must be given together (${o.has(a) ? `--${b}` : `--${a}`} is missing)` : undefined,
  };
}

/** `option` requires `needed` to be set. */
function requires(programs: readonly Program[], option: string, needed: string, why = ''): Rule {
  return {
    programs,
    check: (o) => (o.has(option) && !o.has(needed) ? `--${option} requires --${needed}${why}` : undefined),
  };
}

function requiresGate(programs: readonly Program[], option: string, gate: string, enabledByDefault: boolean): Rule {
  return {
    programs,
    check: (o) =>
      o.isActive(option) && !o.gate(gate, enabledByDefault)
        ? `--${option} requires the ${gate} feature gate (--feature-gates=${gate}=true)`
        : undefined,
  };
}

// ---------------------------------------------------------------------------------------------------
// Leader election (controller manager) and coordinated leadership (API server): the renew deadline
// must be below the lease duration (seed 2), and the client library's constructor checks (reference
// leader-election.md): all three positive, and the renew deadline above 1.2 x the retry period.

const JITTER_FACTOR = 1.2;

function leaseRules(prefix: string, program: Program, enabledBy?: string): Rule {
  const lease = `${prefix}-lease-duration`;
  const renew = `${prefix}-renew-deadline`;
  const retry = `${prefix}-retry-period`;
  return {
    programs: [program],
    check: (o) => {
      if (enabledBy && o.bool(enabledBy) === false) return undefined;
      const problems: string[] = [];
      for (const name of [lease, renew, retry]) {
        const ms = o.ms(name);
        if (ms !== undefined && ms <= 0) problems.push(`--${name} must be greater than zero, got ${o.durationText(name)}`);
      }
      const [l, d, r] = [o.ms(lease), o.ms(renew), o.ms(retry)];
      if (l !== undefined && d !== undefined && l > 0 && d > 0 && d >= l) {
        problems.push(
          `--${renew} (${o.durationText(renew)}) must be less than --${lease} (${o.durationText(lease)})`,
        );
      }
      if (d !== undefined && r !== undefined && d > 0 && r > 0 && d <= r * JITTER_FACTOR) {
        problems.push(
          `--${renew} (${o.durationText(renew)}) must be greater than ${JITTER_FACTOR} x --${retry} (${o.durationText(retry)})`,
        );
      }
      return problems;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Common to the daemons.

const MAJOR_MINOR = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

const commonRules: Rule[] = [
  {
    programs: DAEMONS,
    check: (o) => {
      const value = o.str('show-hidden-metrics-for-version');
      return value !== undefined && !MAJOR_MINOR.test(value)
        ? `--show-hidden-metrics-for-version must be of the form <major>.<minor>, such as 1.31, got ${JSON.stringify(value)}`
        : undefined;
    },
  },
  together(DAEMONS, 'tls-cert-file', 'tls-private-key-file'),
  requiresGate(DAEMONS, 'log-text-split-stream', 'LoggingAlphaOptions', false),
  requiresGate(DAEMONS, 'log-text-info-buffer-size', 'LoggingAlphaOptions', false),
  {
    programs: DAEMONS,
    check: (o) => {
      const size = o.raw('log-text-info-buffer-size') as Quantity | undefined;
      return size && size.value < 0 ? `--log-text-info-buffer-size must not be negative, got ${size.text}` : undefined;
    },
  },
  {
    // Upstream's logging validation: the info buffer exists only when info lines have a stream of their own.
    programs: DAEMONS,
    check: (o) => {
      const size = o.raw('log-text-info-buffer-size') as Quantity | undefined;
      return size && size.value > 0 && o.raw('log-text-split-stream') !== true
        ? `--log-text-info-buffer-size=${size.text} is only supported in combination with --log-text-split-stream`
        : undefined;
    },
  },
  {
    programs: CONTROL_PLANE,
    check: (o) =>
      Object.keys(o.map('allow-metric-labels'))
        .filter((key) => key.split(',').length !== 2 || key.split(',').some((part) => part.trim() === ''))
        .map((key) => `--allow-metric-labels keys must be of the form <MetricName>,<LabelName>, got ${JSON.stringify(key)}`),
  },
  ...['emulated-version', 'min-compatibility-version'].map(
    (name): Rule => ({
      programs: CONTROL_PLANE,
      check: (o) =>
        o
          .list(name)
          .filter((entry) => !MAJOR_MINOR.test(entry.includes('=') ? entry.slice(entry.indexOf('=') + 1) : entry))
          .map((entry) => `--${name} entries must be <major>.<minor> or <component>=<major>.<minor>, got ${JSON.stringify(entry)}`),
    }),
  ),
  atLeast(DAEMONS, 'http2-max-streams-per-connection', 0, 'zero (runtime default) or positive'),
  {
    programs: DAEMONS,
    check: (o) =>
      o.entries('tls-sni-cert-key').flatMap((entry) => {
        const [files, names] = entry.includes(':') ? [entry.slice(0, entry.indexOf(':')), entry.slice(entry.indexOf(':') + 1)] : [entry, undefined];
        if (files.split(',').length !== 2 || files.split(',').some((f) => f.trim() === '')) {
          return [`--tls-sni-cert-key expects <certfile>,<keyfile>[:<domain>,...], got ${JSON.stringify(entry)}`];
        }
        return names !== undefined && names.trim() === ''
          ? [`--tls-sni-cert-key: the domain list after ":" must not be empty, got ${JSON.stringify(entry)}`]
          : [];
      }),
  },
];

// ---------------------------------------------------------------------------------------------------
// API server.

const ADMISSION_PLUGINS: ReadonlySet<string> = new Set(ADMISSION_PLUGIN_ORDER);

const AUTHORIZATION_WEBHOOK_OPTIONS = [
  'authorization-webhook-config-file',
  'authorization-webhook-version',
  'authorization-webhook-cache-authorized-ttl',
  'authorization-webhook-cache-unauthorized-ttl',
];

const OIDC_OPTIONS = [
  'oidc-issuer-url', 'oidc-client-id', 'oidc-ca-file', 'oidc-username-claim', 'oidc-username-prefix',
  'oidc-groups-claim', 'oidc-groups-prefix', 'oidc-required-claim', 'oidc-signing-algs',
];

/** Upstream caps the service range at 2^20 addresses: a /12 for IPv4, a /108 for IPv6. */
const MAX_SERVICE_RANGE_BITS = 20;

function cidrsOf(o: OptionView, name: string): Cidr[] {
  const cidrs: Cidr[] = [];
  for (const text of o.list(name)) {
    try {
      cidrs.push(parseCidr(text));
    } catch {
      // The type parser reports malformed CIDRs; here only well-formed ones are checked further.
    }
  }
  return cidrs;
}

function auditBackendRules(backend: 'log' | 'webhook'): Rule {
  const p = `audit-${backend}`;
  return {
    programs: ['apiserver'],
    check: (o) => {
      const enabled = backend === 'log' ? o.has('audit-log-path') : o.has('audit-webhook-config-file');
      if (!enabled) return undefined;
      const problems: string[] = [];
      if (o.str(`${p}-mode`) === 'batch') {
        for (const name of [`${p}-batch-buffer-size`, `${p}-batch-max-size`]) {
          const v = o.num(name);
          if (v !== undefined && v <= 0) problems.push(`--${name} must be positive in batch mode (--${p}-mode=batch), got ${v}`);
        }
        const wait = o.ms(`${p}-batch-max-wait`);
        if (wait !== undefined && wait <= 0) {
          problems.push(`--${p}-batch-max-wait must be positive in batch mode, got ${o.durationText(`${p}-batch-max-wait`)}`);
        }
        if (o.bool(`${p}-batch-throttle-enable`)) {
          for (const name of [`${p}-batch-throttle-qps`, `${p}-batch-throttle-burst`]) {
            const v = o.num(name);
            if (v === undefined || v <= 0) {
              problems.push(`--${name} must be positive when --${p}-batch-throttle-enable is true${v === undefined ? '' : `, got ${v}`}`);
            }
          }
        }
      }
      if (o.bool(`${p}-truncate-enabled`)) {
        const event = o.num(`${p}-truncate-max-event-size`);
        const batch = o.num(`${p}-truncate-max-batch-size`);
        if (event !== undefined && event <= 0) problems.push(`--${p}-truncate-max-event-size must be positive, got ${event}`);
        if (batch !== undefined && batch <= 0) problems.push(`--${p}-truncate-max-batch-size must be positive, got ${batch}`);
        if (event !== undefined && batch !== undefined && event > batch) {
          problems.push(`--${p}-truncate-max-event-size (${event}) must not exceed --${p}-truncate-max-batch-size (${batch})`);
        }
      }
      return problems;
    },
  };
}

const apiserverRules: Rule[] = [
  {
    programs: ['apiserver'],
    check: (o) => {
      const port = o.num('secure-port');
      if (port === 0) return '--secure-port must be between 1 and 65535: the secure port cannot be turned off, got 0';
      return port !== undefined && (port < 0 || port > 65535) ? `--secure-port must be between 1 and 65535, got ${port}` : undefined;
    },
  },
  inRange(['apiserver'], 'orch-service-node-port', 0, 65535, ' (0 means ClusterIP)'),
  inRange(['apiserver'], 'goaway-chance', 0, 0.02),
  {
    programs: ['apiserver'],
    check: (o) => {
      if (!o.has('authorization-config')) return undefined;
      const conflicting = ['authorization-mode', ...AUTHORIZATION_WEBHOOK_OPTIONS].filter((n) => o.explicit(n));
      return conflicting.length > 0
        ? `--authorization-config cannot be used together with ${conflicting.map((n) => `--${n}`).join(', ')}; put the authorizer chain in the configuration file`
        : undefined;
    },
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      if (o.has('authorization-config')) return undefined;
      const modes = o.list('authorization-mode');
      const problems: string[] = [];
      const seen = new Set<string>();
      for (const mode of modes) {
        if (seen.has(mode)) problems.push(`--authorization-mode lists ${mode} more than once`);
        seen.add(mode);
      }
      if (seen.has('ABAC') && !o.has('authorization-policy-file')) {
        problems.push('--authorization-mode=ABAC requires --authorization-policy-file');
      }
      if (!seen.has('ABAC') && o.has('authorization-policy-file')) {
        problems.push('--authorization-policy-file is only used with --authorization-mode including ABAC');
      }
      if (seen.has('Webhook') && !o.has('authorization-webhook-config-file')) {
        problems.push('--authorization-mode=Webhook requires --authorization-webhook-config-file');
      }
      if (!seen.has('Webhook') && o.has('authorization-webhook-config-file')) {
        problems.push('--authorization-webhook-config-file is only used with --authorization-mode including Webhook');
      }
      return problems;
    },
  },
  requires(['apiserver'], 'oidc-issuer-url', 'oidc-client-id', ': the client ID is required when the issuer URL is set'),
  {
    // Upstream's EtcdOptions.Validate: reloading needs a file to reload.
    programs: ['apiserver'],
    check: (o) =>
      o.bool('encryption-provider-config-automatic-reload') && !o.has('encryption-provider-config')
        ? '--encryption-provider-config-automatic-reload must be set with --encryption-provider-config'
        : undefined,
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      const url = o.str('oidc-issuer-url');
      return url !== undefined && !url.startsWith('https://')
        ? `--oidc-issuer-url must be an https:// URL, got ${JSON.stringify(url)}`
        : undefined;
    },
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      if (!o.has('authentication-config')) return undefined;
      // Options with defaults (oidc-username-claim, oidc-signing-algs) conflict only when given.
      const conflicting = OIDC_OPTIONS.filter((n) => o.explicit(n));
      return conflicting.length > 0
        ? `--authentication-config cannot be used together with ${conflicting.map((n) => `--${n}`).join(', ')}; configure the JWT authenticator in the file instead`
        : undefined;
    },
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      if (!o.has('service-account-signing-endpoint')) return undefined;
      const conflicting = ['service-account-signing-key-file', 'service-account-key-file'].filter((n) => o.has(n));
      return conflicting.length > 0
        ? `--service-account-signing-endpoint cannot be used together with ${conflicting.map((n) => `--${n}`).join(', ')}`
        : undefined;
    },
  },
  requiresGate(['apiserver'], 'service-account-signing-endpoint', 'ExternalServiceAccountTokenSigner', false),
  {
    programs: ['apiserver'],
    check: (o) =>
      o.has('service-account-signing-key-file') && !o.has('service-account-key-file') && !o.has('tls-private-key-file')
        ? '--service-account-signing-key-file requires --service-account-key-file (or --tls-private-key-file, its fallback) to verify the tokens it signs'
        : undefined,
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      const issuers = o.list('service-account-issuer');
      const duplicates = issuers.filter((issuer, i) => issuers.indexOf(issuer) !== i);
      return duplicates.map((d) => `--service-account-issuer lists ${JSON.stringify(d)} more than once`);
    },
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      const enabled = o.list('enable-admission-plugins');
      const disabled = o.list('disable-admission-plugins');
      const problems: string[] = [];
      for (const [name, plugins] of [
        ['enable-admission-plugins', enabled],
        ['disable-admission-plugins', disabled],
        ['admission-control', o.list('admission-control')],
      ] as const) {
        for (const plugin of plugins) {
          if (!ADMISSION_PLUGINS.has(plugin)) problems.push(`--${name}: unknown admission plugin ${JSON.stringify(plugin)}`);
        }
      }
      const both = enabled.filter((p) => disabled.includes(p));
      if (both.length > 0) {
        problems.push(`${both.join(', ')} cannot be in both --enable-admission-plugins and --disable-admission-plugins`);
      }
      if (o.has('admission-control') && (enabled.length > 0 || disabled.length > 0)) {
        problems.push('--admission-control cannot be used together with --enable-admission-plugins or --disable-admission-plugins');
      }
      return problems;
    },
  },
  {
    programs: ['apiserver'],
    check: (o) =>
      cidrsOf(o, 'service-cluster-ip-range')
        .filter((c) => (c.family === 4 ? 32 : 128) - c.prefix > MAX_SERVICE_RANGE_BITS)
        .map(
          (c) =>
            `--service-cluster-ip-range ${c.text} is too large: for IPv${c.family} the prefix length must be at least ${(c.family === 4 ? 32 : 128) - MAX_SERVICE_RANGE_BITS}`,
        ),
  },
  {
    programs: ['apiserver'],
    check: (o) => {
      const range = o.raw('service-node-port-range') as PortRange | undefined;
      const port = o.num('orch-service-node-port');
      if (!range || typeof range !== 'object' || !port) return undefined;
      const last = range.base + range.size - 1;
      return port < range.base || port > last
        ? `--orch-service-node-port ${port} must be within --service-node-port-range ${range.base}-${last}`
        : undefined;
    },
  },
  leaseRules('coordinated-leadership', 'apiserver'),
  atLeast(['apiserver'], 'max-requests-inflight', 0, 'zero or positive'),
  atLeast(['apiserver'], 'max-mutating-requests-inflight', 0, 'zero or positive'),
  {
    programs: ['apiserver'],
    check: (o) => {
      if (o.bool('enable-priority-and-fairness') === false) return undefined;
      const total = (o.num('max-requests-inflight') ?? 400) + (o.num('max-mutating-requests-inflight') ?? 200);
      return total <= 0
        ? '--max-requests-inflight plus --max-mutating-requests-inflight must be positive while --enable-priority-and-fairness is true'
        : undefined;
    },
  },
  ...['request-timeout', 'livez-grace-period', 'shutdown-delay-duration', 'shutdown-watch-termination-grace-period'].map((n) =>
    notNegativeDuration(['apiserver'], n),
  ),
  atLeast(['apiserver'], 'min-request-timeout', 0, 'zero or positive'),
  atLeast(['apiserver'], 'max-connection-bytes-per-sec', 0, 'zero (no limit) or positive'),
  atLeast(['apiserver'], 'lease-reuse-duration-seconds', 1, 'positive'),
  atLeast(['apiserver'], 'delete-collection-workers', 1, 'positive'),
  notNegativeDuration(['apiserver'], 'agent-timeout'),
  ...['audit-log-maxage', 'audit-log-maxbackup', 'audit-log-maxsize'].map((n) => atLeast(['apiserver'], n, 0, 'zero or positive')),
  auditBackendRules('log'),
  auditBackendRules('webhook'),
  {
    programs: ['apiserver'],
    check: (o) =>
      o
        .list('strict-transport-security-directives')
        .filter((d) => d !== 'includeSubDomains' && d !== 'preload' && !/^max-age=\d+$/.test(d))
        .map(
          (d) =>
            `--strict-transport-security-directives: ${JSON.stringify(d)} is not one of max-age=<seconds>, includeSubDomains, preload`,
        ),
  },
  // Upstream's validateCorsAllowedOriginList: each pattern compiles and pins the host at both ends.
  {programs: ['apiserver'], check: (o) => corsPatternProblems(o.list('cors-allowed-origins'))},
  // Go's curve IDs, each one the runtime's OpenSSL can offer.
  {
    programs: ['apiserver', 'controller-manager'],
    check: (o) => tlsCurveProblems('tls-curve-preferences', (o.raw('tls-curve-preferences') as number[] | undefined) ?? [], opensslHasGroup),
  },
  together(['apiserver'], 'proxy-client-cert-file', 'proxy-client-key-file'),
  together(['apiserver'], 'agent-client-certificate', 'agent-client-key'),
  {
    programs: ['apiserver'],
    check: (o) =>
      o
        .list('kvstore-servers')
        .filter((s) => !/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(s))
        .map((s) => `--kvstore-servers entries must be URLs of the form scheme://ip:port, got ${JSON.stringify(s)}`),
  },
  {
    programs: ['apiserver'],
    check: (o) =>
      o
        .list('kvstore-servers-overrides')
        .filter((s) => !/^[^/#\s]*\/[^/#\s]+#[a-z][a-z0-9+.-]*:\/\/[^;\s]+(;[a-z][a-z0-9+.-]*:\/\/[^;\s]+)*$/i.test(s))
        .map(
          (s) =>
            `--kvstore-servers-overrides entries must be of the form group/resource#servers, servers being URLs separated by semicolons, got ${JSON.stringify(s)}`,
        ),
  },
  {
    programs: ['apiserver'],
    check: (o) =>
      o
        .list('watch-cache-sizes')
        .filter((s) => !/^[a-z0-9]+(\.[a-z0-9.-]+)?#\d+$/.test(s))
        .map((s) => `--watch-cache-sizes entries must be of the form resource[.group]#size, got ${JSON.stringify(s)}`),
  },
  ...['emulation-forward-compatible', 'runtime-config-emulation-forward-compatible'].map(
    (name): Rule => ({
      programs: ['apiserver'],
      check: (o) =>
        o.bool(name) && !o.has('emulated-version')
          ? `--${name} may only be true when --emulated-version sets a version lower than the binary version`
          : undefined,
    }),
  ),
  ...['peer-advertise-ip', 'peer-advertise-port', 'peer-ca-file'].map((n) =>
    requiresGate(['apiserver'], n, 'UnknownVersionInteroperabilityProxy', false),
  ),
  {
    programs: ['apiserver'],
    check: (o) => {
      const port = o.str('peer-advertise-port');
      return port !== undefined && !(/^\d+$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)
        ? `--peer-advertise-port must be a port between 1 and 65535, got ${JSON.stringify(port)}`
        : undefined;
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// Controller manager.

/** Signer-specific CA options, each a cert/key pair (seed 2, "Certificate signing"). */
const SIGNERS = ['orch-apiserver-client', 'agent-client', 'agent-serving', 'legacy-unknown'];

const controllerManagerRules: Rule[] = [
  inRange(['controller-manager'], 'secure-port', 0, 65535, ' (0 disables HTTPS)'),
  leaseRules('leader-elect', 'controller-manager', 'leader-elect'),
  {
    programs: ['controller-manager'],
    check: (o) => {
      const lock = o.str('leader-elect-resource-lock');
      return lock !== undefined && lock !== 'leases'
        ? `--leader-elect-resource-lock must be leases (the only supported lock), got ${JSON.stringify(lock)}`
        : undefined;
    },
  },
  {
    programs: ['controller-manager'],
    check: (o) => {
      const problems: string[] = [];
      const general = ['cluster-signing-cert-file', 'cluster-signing-key-file'].filter((n) => o.has(n));
      const specific = SIGNERS.flatMap((s) => [`cluster-signing-${s}-cert-file`, `cluster-signing-${s}-key-file`]).filter((n) =>
        o.has(n),
      );
      if (general.length > 0 && specific.length > 0) {
        problems.push(
          `${general.map((n) => `--${n}`).join(' and ')} cannot be used together with the signer-specific options ${specific.map((n) => `--${n}`).join(', ')}; use either the general pair or the signer-specific ones`,
        );
      }
      for (const prefix of ['cluster-signing', ...SIGNERS.map((s) => `cluster-signing-${s}`)]) {
        const cert = `${prefix}-cert-file`;
        const key = `${prefix}-key-file`;
        if (o.has(cert) && !o.has(key)) problems.push(`--${cert} requires --${key}`);
        if (o.has(key) && !o.has(cert)) problems.push(`--${key} requires --${cert}`);
      }
      return problems;
    },
  },
  {
    programs: ['controller-manager'],
    check: (o) => {
      const ms = o.ms('attach-detach-reconcile-sync-period');
      return ms !== undefined && ms <= 1000
        ? `--attach-detach-reconcile-sync-period must be more than 1s, got ${o.durationText('attach-detach-reconcile-sync-period')}`
        : undefined;
    },
  },
  {
    programs: ['controller-manager'],
    check: (o) =>
      o.bool('allocate-node-cidrs') && !o.has('cluster-cidr') ? '--allocate-node-cidrs requires --cluster-cidr' : undefined,
  },
  {
    programs: ['controller-manager'],
    check: (o) => {
      const problems: string[] = [];
      for (const cidr of cidrsOf(o, 'cluster-cidr')) {
        const family = `ipv${cidr.family}`;
        const mask =
          (o.explicit('node-cidr-mask-size') ? o.num('node-cidr-mask-size') : undefined) ?? o.num(`node-cidr-mask-size-${family}`);
        const maskOption = o.explicit('node-cidr-mask-size') ? 'node-cidr-mask-size' : `node-cidr-mask-size-${family}`;
        const bits = cidr.family === 4 ? 32 : 128;
        if (mask === undefined) continue;
        if (mask < cidr.prefix || mask > bits) {
          problems.push(
            `--${maskOption} (${mask}) must be between the --cluster-cidr prefix length of ${cidr.text} (${cidr.prefix}) and ${bits}`,
          );
        }
      }
      return problems;
    },
  },
  inRange(['controller-manager'], 'max-endpoints-per-slice', 1, 1000),
  inRange(['controller-manager'], 'mirroring-max-endpoints-per-subset', 1, 1000),
  inRange(['controller-manager'], 'concurrent-service-endpoint-syncs', 1, 50),
  inRange(['controller-manager'], 'mirroring-concurrent-service-endpoint-syncs', 1, 50),
  atLeast(['controller-manager'], 'concurrent-resource-quota-syncs', 1),
  {
    programs: ['controller-manager'],
    check: (o) => {
      const ms = o.ms('resource-quota-sync-period');
      return ms !== undefined && ms <= 0 ? `--resource-quota-sync-period must be more than 0s, got ${o.durationText('resource-quota-sync-period')}` : undefined;
    },
  },
  {
    programs: ['controller-manager'],
    check: (o) =>
      o.has('leader-migration-config') && !o.bool('enable-leader-migration')
        ? '--leader-migration-config requires --enable-leader-migration=true'
        : undefined,
  },
  inRange(['controller-manager'], 'unhealthy-zone-threshold', 0, 1, ' (a fraction of nodes)'),
  atLeast(['controller-manager'], 'node-eviction-rate', 0, 'zero or positive'),
  atLeast(['controller-manager'], 'secondary-node-eviction-rate', 0, 'zero or positive'),
  {
    programs: ['controller-manager'],
    check: (o) =>
      o
        .list('controllers')
        .filter((c) => c !== '*' && !/^-?[a-z0-9][a-z0-9-]*$/.test(c))
        .map((c) => `--controllers entries must be *, <name> or -<name>, got ${JSON.stringify(c)}`),
  },
];

// ---------------------------------------------------------------------------------------------------
// Node agent.

const ALLOCATABLE_LEVELS = [
  'none', 'pods', 'system-reserved', 'system-reserved-compressible', 'orch-reserved', 'orch-reserved-compressible',
];
const RESERVABLE_RESOURCES = ['cpu', 'memory', 'pid', 'ephemeral-storage'];

/** The default hard threshold memory.available<100Mi (reference eviction.md, "Defaults"). */
const DEFAULT_HARD_MEMORY_AVAILABLE = 100 * 1024 * 1024;

function quantityOrUndefined(text: string): Quantity | undefined {
  try {
    return parseQuantity(text);
  } catch {
    return undefined;
  }
}

const agentRules: Rule[] = [
  {
    // The seed calls --runonce "exclusive with --enable-server", but --enable-server defaults to true, so
    // refusing whenever the server is on would make --runonce unusable without a second flag. A user who
    // writes --runonce means "no server"; we refuse only the contradiction the user actually wrote:
    // --runonce together with an explicit --enable-server(=true).
    programs: ['agent'],
    check: (o) =>
      o.bool('runonce') && o.explicit('enable-server') && o.bool('enable-server')
        ? '--runonce cannot be used with --enable-server=true: a run-once agent does not serve; drop --enable-server or set it to false'
        : undefined,
  },
  inRange(['agent'], 'port', 1, 65535),
  inRange(['agent'], 'read-only-port', 0, 65535, ' (0 disables it)'),
  inRange(['agent'], 'healthz-port', 0, 65535, ' (0 disables it)'),
  inRange(['agent'], 'image-gc-high-threshold', 0, 100, ' (a percentage of disk usage)'),
  inRange(['agent'], 'image-gc-low-threshold', 0, 100, ' (a percentage of disk usage)'),
  {
    programs: ['agent'],
    check: (o) => {
      const low = o.num('image-gc-low-threshold');
      const high = o.num('image-gc-high-threshold');
      return low !== undefined && high !== undefined && low >= high
        ? `--image-gc-low-threshold (${low}) must be less than --image-gc-high-threshold (${high})`
        : undefined;
    },
  },
  atLeast(['agent'], 'container-log-max-files', 2),
  {
    programs: ['agent'],
    check: (o) => {
      const raw = o.raw('container-log-max-size');
      const size = typeof raw === 'string' ? quantityOrUndefined(raw) : (raw as Quantity | undefined);
      if (raw === undefined) return undefined;
      return !size || size.value <= 0
        ? `--container-log-max-size must be a positive quantity such as 10Mi, got ${JSON.stringify(typeof raw === 'string' ? raw : size?.text)}`
        : undefined;
    },
  },
  inRange(['agent'], 'oom-score-adj', -1000, 1000),
  ...['max-open-files', 'max-pods', 'pods-per-core', 'event-qps', 'event-burst', 'orch-api-qps', 'orch-api-burst', 'registry-qps', 'registry-burst'].map(
    (n) => atLeast(['agent'], n, 0, 'zero or positive'),
  ),
  atLeast(['agent'], 'node-status-max-images', -1, '-1 (no cap) or more'),
  {
    programs: ['agent'],
    check: (o) => {
      const ms = o.ms('node-status-update-frequency');
      return ms !== undefined && ms <= 0
        ? `--node-status-update-frequency must be positive, got ${o.durationText('node-status-update-frequency')}`
        : undefined;
    },
  },
  {
    programs: ['agent'],
    check: (o) => {
      const soft = (o.raw('eviction-soft') as EvictionThreshold[] | undefined) ?? [];
      const grace = o.map<DurationValue>('eviction-soft-grace-period');
      return soft
        .filter((t) => grace[t.signal] === undefined)
        .map(
          (t) =>
            `--eviction-soft threshold ${t.signal} needs a grace period in --eviction-soft-grace-period (for example ${t.signal}=1m30s)`,
        );
    },
  },
  {
    programs: ['agent'],
    check: (o) => {
      const levels = o.list('enforce-node-allocatable');
      const problems = levels
        .filter((l) => !ALLOCATABLE_LEVELS.includes(l))
        .map((l) => `--enforce-node-allocatable: ${JSON.stringify(l)} is not one of ${ALLOCATABLE_LEVELS.join(', ')}`);
      if (levels.includes('none') && levels.length > 1) {
        problems.push('--enforce-node-allocatable may not contain other levels when none is given');
      }
      for (const owner of ['system', 'orch']) {
        const needsCgroup = levels.some((l) => l === `${owner}-reserved` || l === `${owner}-reserved-compressible`);
        if (needsCgroup && !o.has(`${owner}-reserved-cgroup`)) {
          problems.push(`--enforce-node-allocatable with ${owner}-reserved requires --${owner}-reserved-cgroup`);
        }
      }
      if (o.bool('cgroups-per-qos') === false && levels.some((l) => l !== 'none')) {
        problems.push('--enforce-node-allocatable may only be none when --cgroups-per-qos is false');
      }
      return problems;
    },
  },
  {
    programs: ['agent'],
    check: (o) =>
      Object.keys(o.map('qos-reserved'))
        .filter((resource) => resource !== 'memory')
        .map((resource) => `--qos-reserved can only reserve memory, not ${JSON.stringify(resource)}`),
  },
  requiresGate(['agent'], 'qos-reserved', 'QOSReserved', false),
  {
    programs: ['agent'],
    check: (o) => {
      const ms = o.ms('cpu-cfs-quota-period');
      if (ms === undefined) return undefined;
      if (ms < 1 || ms > 1000) return `--cpu-cfs-quota-period must be between 1ms and 1s, got ${o.durationText('cpu-cfs-quota-period')}`;
      return ms !== 100 && !o.gate('CustomCPUCFSQuotaPeriod', false)
        ? '--cpu-cfs-quota-period other than 100ms requires the CustomCPUCFSQuotaPeriod feature gate (--feature-gates=CustomCPUCFSQuotaPeriod=true)'
        : undefined;
    },
  },
  {
    programs: ['agent'],
    check: (o) =>
      o.bool('rotate-server-certificates') && !o.gate('RotateKubeletServerCertificate', true)
        ? '--rotate-server-certificates requires the RotateKubeletServerCertificate feature gate'
        : undefined,
  },
  {
    programs: ['agent'],
    check: (o) => {
      const labels = o.map('node-labels');
      const problems: string[] = [];
      for (const [key, value] of Object.entries(labels)) {
        const errors = [...qualifiedNameErrors(key), ...labelValueErrors(value)];
        if (errors.length > 0) problems.push(`--node-labels: invalid label ${key}=${value}: ${errors.join('; ')}`);
      }
      // The name set of this command line (--names), else the process's.
      const given = o.str('names');
      const n = given && (NAME_SET_IDS as readonly string[]).includes(given) ? nameSet(given as NameSetId) : names();
      const forbidden = Object.keys(labels).filter((k) => !isAllowedNodeLabel(k, n)).sort();
      if (forbidden.length > 0) {
        const domain = n.labelDomain;
        problems.push(
          `--node-labels: unknown '${domain}' labels [${forbidden.join(' ')}]; labels in the '${domain}' namespace must begin with an allowed prefix (${allowedNodeLabelPrefixes(n).join(', ')}) or be one of ${allowedNodeLabels(n).join(', ')}`,
        );
      }
      return problems;
    },
  },
  {
    programs: ['agent'],
    check: (o) => {
      const ips = o.list('node-ip');
      if (ips.length === 0) return undefined;
      const bad = ips.filter((ip) => isIP(ip) === 0);
      if (bad.length > 0) return `--node-ip: ${bad.map((b) => JSON.stringify(b)).join(', ')} is not an IP address`;
      return ips.length > 2 || (ips.length === 2 && isIP(ips[0]) === isIP(ips[1]))
        ? `--node-ip must be a single IP or a dual-stack pair (one IPv4, one IPv6), got ${ips.join(',')}`
        : undefined;
    },
  },
  {
    programs: ['agent'],
    check: (o) =>
      o
        .list('cluster-dns')
        .filter((ip) => isIP(ip) === 0)
        .map((ip) => `--cluster-dns: ${JSON.stringify(ip)} is not an IP address`),
  },
  {
    programs: ['agent'],
    check: (o) =>
      cidrsOf(o, 'pod-cidr')
        .filter((c) => c.family === 6 && c.prefix < 112)
        .map((c) => `--pod-cidr ${c.text} is too large: an IPv6 pod range may hold at most 65536 addresses (prefix length 112 or more)`),
  },
  ...['orch-reserved', 'system-reserved'].map(
    (name): Rule => ({
      programs: ['agent'],
      check: (o) =>
        Object.entries(o.map(name)).flatMap(([resource, amount]) => {
          if (!RESERVABLE_RESOURCES.includes(resource)) {
            return [`--${name}: ${JSON.stringify(resource)} cannot be reserved; use ${RESERVABLE_RESOURCES.join(', ')}`];
          }
          const quantity = quantityOrUndefined(amount);
          return !quantity || quantity.value < 0
            ? [`--${name}: ${resource}=${amount} is not a non-negative quantity such as 500m or 1Gi`]
            : [];
        }),
    }),
  ),
  {
    // Seed 3: "the sum per type must equal kube-reserved plus system-reserved plus eviction threshold".
    // Checked for memory, whose three terms we know; hugepages are not part of node reservations.
    programs: ['agent'],
    check: (o) => {
      const reservations = (o.raw('reserved-memory') as MemoryReservation[] | undefined) ?? [];
      const reserved = reservations.filter((r) => r.limits.memory);
      if (reserved.length === 0) return undefined;
      const total = reserved.reduce((sum, r) => sum + r.limits.memory.value, 0);
      const amount = (name: string) => quantityOrUndefined(o.map(name).memory ?? '0')?.value ?? 0;
      const hard = ((o.raw('eviction-hard') as EvictionThreshold[] | undefined) ?? []).find((t) => t.signal === 'memory.available');
      // A percentage threshold depends on the node's capacity, unknown here: the runtime check covers it.
      if (hard?.value.percentage !== undefined) return undefined;
      const eviction = o.has('eviction-hard') ? (hard?.value.quantity?.value ?? 0) : DEFAULT_HARD_MEMORY_AVAILABLE;
      const expected = amount('orch-reserved') + amount('system-reserved') + eviction;
      return total !== expected
        ? `--reserved-memory: the memory reserved over all NUMA nodes (${total} bytes) must equal --orch-reserved memory + --system-reserved memory + the --eviction-hard memory.available threshold (${expected} bytes)`
        : undefined;
    },
  },
  {
    programs: ['agent'],
    check: (o) => {
      const problems: string[] = [];
      if (o.str('authorization-mode') === 'Webhook' && !o.has('orchconfig')) {
        problems.push('--authorization-mode=Webhook requires --orchconfig: subject access reviews go to the API server');
      }
      if (o.bool('authentication-token-webhook') && !o.has('orchconfig')) {
        problems.push('--authentication-token-webhook requires --orchconfig: token reviews go to the API server');
      }
      return problems;
    },
  },
  requires(['agent'], 'bootstrap-orchconfig', 'orchconfig', ': the client configuration obtained by bootstrapping is written there'),
  {
    programs: ['agent'],
    check: (o) => (o.bool('exit-on-lock-contention') && !o.has('lock-file') ? '--exit-on-lock-contention requires --lock-file' : undefined),
  },
  requires(['agent'], 'system-cgroups', 'cgroup-root'),
  {
    programs: ['agent'],
    check: (o) =>
      ['runtime-cgroups', 'agent-cgroups', 'system-cgroups']
        .filter((n) => o.has(n) && !o.str(n)!.startsWith('/'))
        .map((n) => `--${n} must be an absolute cgroup name starting with /, got ${JSON.stringify(o.str(n))}`),
  },
  {
    programs: ['agent'],
    check: (o) => {
      const cpus = o.str('reserved-cpus');
      return cpus !== undefined && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(cpus.replace(/\s/g, ''))
        ? `--reserved-cpus must be a CPU list such as 0-3,8, got ${JSON.stringify(cpus)}`
        : undefined;
    },
  },
  {
    programs: ['agent'],
    check: (o) =>
      o
        .list('allowed-unsafe-sysctls')
        .filter((s) => s.slice(0, -1).includes('*') || !/^[a-z0-9_.\-/*]+$/.test(s))
        .map((s) => `--allowed-unsafe-sysctls: ${JSON.stringify(s)} must be a sysctl name or a prefix ending in *`),
  },
];

// ---------------------------------------------------------------------------------------------------
// patch: texts are kubectl's, since `orch patch` mirrors `kubectl patch`.

const patchRules: Rule[] = [
  {
    programs: ['patch'],
    check: (o) => (o.has('kustomize') && o.has('filename') ? 'only one of -f or -k can be specified' : undefined),
  },
  {
    programs: ['patch'],
    check: (o) => (o.has('kustomize') && o.bool('recursive') ? "the -k flag can't be used with -f or -R" : undefined),
  },
  {
    programs: ['patch'],
    check: (o) => (o.has('patch') && o.has('patch-file') ? 'cannot specify --patch and --patch-file together' : undefined),
  },
  {
    programs: ['patch'],
    check: (o) =>
      o.bool('local') && o.str('dry-run') === 'server'
        ? 'cannot specify --local and --dry-run=server - did you mean --dry-run=client?'
        : undefined,
  },
];

const RULES: readonly Rule[] = [...commonRules, ...apiserverRules, ...controllerManagerRules, ...agentRules, ...patchRules];

/**
 * Checks the rules between a program's options. `values` holds the parsed value of every option that has
 * a default or was set (keyed by long name); `explicitlySet` the names given on the command line.
 * Returns one message per problem; empty when the combination is valid.
 */
export function validateOptionRules(
  program: Program,
  values: Record<string, unknown>,
  explicitlySet: ReadonlySet<string>,
): string[] {
  const view = new OptionView(values, explicitlySet);
  const problems: string[] = [];
  for (const rule of RULES) {
    if (!rule.programs.includes(program)) continue;
    const result = rule.check(view);
    if (typeof result === 'string') problems.push(result);
    else if (Array.isArray(result)) problems.push(...result);
  }
  return problems;
}

/** Whether this runtime's OpenSSL knows a TLS group (what Node's `ecdhCurve` accepts). */
function opensslHasGroup(name: string): boolean {
  try {
    createSecureContext({ecdhCurve: name});
    return true;
  } catch {
    return false;
  }
}
