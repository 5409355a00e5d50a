import { describe, expect, it } from '@jest/globals';
import { getCiphers } from 'node:tls';
import type { OptionSpec, ValueType } from '../../src/options/spec.js';
import {
  CIPHER_SUITE_OPENSSL_NAMES,
  OptionValueError,
  describeAcceptedForm,
  formatOptionValue,
  parseOptionValue,
  toOpenSslCipherList,
} from '../../src/options/types.js';
import { formatDuration, formatDurationNs, parseDuration, parseDurationNs } from '../../src/options/duration.js';
import { parseQuantity } from '../../src/options/quantity.js';

function spec(type: ValueType, extra: Partial<OptionSpec> = {}): OptionSpec {
  return {
    name: `my-${type.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    type,
    seedType: type,
    seedDefault: 'none',
    help: 'test option',
    section: 'test',
    implemented: true,
    ...extra,
  };
}

const q = (text: string) => parseQuantity(text);

describe('Go durations', () => {
  it.each([
    ['1m', '1m0s', 60_000],
    ['60s', '1m0s', 60_000],
    ['300ms', '300ms', 300],
    ['1h', '1h0m0s', 3_600_000],
    ['8760h', '8760h0m0s', 31_536_000_000],
    ['1.5s', '1.5s', 1_500],
    ['2h45m', '2h45m0s', 9_900_000],
    ['0', '0s', 0],
    ['0s', '0s', 0],
    ['1us', '1µs', 0.001],
    ['1µs', '1µs', 0.001],
    ['1μs', '1µs', 0.001],
    ['100ns', '100ns', 0.0001],
    ['1.5ms', '1.5ms', 1.5],
    ['1h30m', '1h30m0s', 5_400_000],
    ['90m', '1h30m0s', 5_400_000],
    ['-1.5h', '-1h30m0s', -5_400_000],
    ['+5s', '5s', 5_000],
    ['.5s', '500ms', 500],
    ['1.0000000001s', '1s', 1_000],
    ['1h1m1.001s', '1h1m1.001s', 3_661_001],
  ])('%s parses to %s', (text, canonical, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
    expect(formatDurationNs(parseDurationNs(text))).toBe(canonical);
    expect(formatDuration(ms)).toBe(canonical);
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['5x', 'time: unknown unit "x" in duration "5x"'],
    ['1', 'time: missing unit in duration "1"'],
    ['s', 'time: invalid duration "s"'],
    ['.s', 'time: invalid duration ".s"'],
    ['-', 'time: invalid duration "-"'],
    ['1h 30m', 'time: unknown unit "h " in duration "1h 30m"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
  ])('%j is refused with Go\'s message', (text, message) => {
    expect(() => parseDurationNs(text)).toThrow(message);
  });
});

describe('resource quantities', () => {
  it.each([
    ['100m', '100m', 0.1],
    ['1Gi', '1Gi', 1073741824],
    ['1.5', '1500m', 1.5],
    ['1.5Gi', '1536Mi', 1610612736],
    ['1000', '1k', 1000],
    ['1200', '1200', 1200],
    ['1e3', '1e3', 1000],
    ['1E3', '1e3', 1000],
    ['1E', '1E', 1e18],
    ['0.1', '100m', 0.1],
    ['1000m', '1', 1],
    ['0', '0', 0],
    ['0Mi', '0', 0],
    ['512', '512', 512],
    ['1024', '1024', 1024],
    ['2048Ki', '2Mi', 2097152],
    ['1025Ki', '1025Ki', 1049600],
    ['0.5Ki', '512', 512],
    ['-1Gi', '-1Gi', -1073741824],
    ['0.1n', '1n', 1e-9],
    ['+5k', '5k', 5000],
    ['1e-3', '1e-3', 0.001],
  ])('%s -> %s', (text, canonical, value) => {
    const quantity = q(text);
    expect(quantity.text).toBe(canonical);
    expect(quantity.value).toBeCloseTo(value, 12);
    expect(q(quantity.text).value).toBeCloseTo(value, 12); // the canonical text reads back to the same amount
  });

  it.each(['1GB', 'abc', '1.2.3', '', '1e', 'Gi', '1 Gi', '--1'])('%j is refused', (text) => {
    expect(() => q(text)).toThrow();
  });
});

interface Good {
  type: ValueType;
  extra?: Partial<OptionSpec>;
  raw: string;
  parsed: unknown;
  canonical: string;
}

const good: Good[] = [
  { type: 'string', raw: 'hello', parsed: 'hello', canonical: 'hello' },
  { type: 'string', extra: { enum: ['json', 'merge', 'strategic'] }, raw: 'merge', parsed: 'merge', canonical: 'merge' },
  { type: 'strings', raw: 'a, b,,c', parsed: ['a', 'b', 'c'], canonical: 'a,b,c' },
  { type: 'strings', extra: { enum: ['RS256', 'ES256'] }, raw: 'ES256,RS256', parsed: ['ES256', 'RS256'], canonical: 'ES256,RS256' },
  { type: 'bool', raw: 'true', parsed: true, canonical: 'true' },
  { type: 'bool', raw: 'FALSE', parsed: false, canonical: 'false' },
  { type: 'bool', raw: '1', parsed: true, canonical: 'true' },
  { type: 'bool', raw: 'f', parsed: false, canonical: 'false' },
  { type: 'bool', raw: 'True', parsed: true, canonical: 'true' },
  { type: 'int', raw: '6443', parsed: 6443, canonical: '6443' },
  { type: 'int', raw: '-1', parsed: -1, canonical: '-1' },
  { type: 'int', raw: '9007199254740991', parsed: 9007199254740991, canonical: '9007199254740991' },
  { type: 'int', extra: { min: 0, max: 65535 }, raw: '65535', parsed: 65535, canonical: '65535' },
  { type: 'int32', raw: '-2147483648', parsed: -2147483648, canonical: '-2147483648' },
  { type: 'int32', raw: '2147483647', parsed: 2147483647, canonical: '2147483647' },
  { type: 'float', raw: '0.55', parsed: 0.55, canonical: '0.55' },
  { type: 'float', raw: '1e-3', parsed: 0.001, canonical: '0.001' },
  { type: 'float', raw: '20', parsed: 20, canonical: '20' },
  { type: 'float', extra: { min: 0, max: 0.02 }, raw: '0.02', parsed: 0.02, canonical: '0.02' },
  { type: 'duration', raw: '1m', parsed: { ms: 60000, text: '1m0s' }, canonical: '1m0s' },
  { type: 'duration', raw: '8760h', parsed: { ms: 31536000000, text: '8760h0m0s' }, canonical: '8760h0m0s' },
  { type: 'duration', raw: '0', parsed: { ms: 0, text: '0s' }, canonical: '0s' },
  { type: 'quantity', raw: '10Mi', parsed: { text: '10Mi', value: 10485760 }, canonical: '10Mi' },
  { type: 'quantity', raw: '100m', parsed: { text: '100m', value: 0.1 }, canonical: '100m' },
  { type: 'keyValue', raw: 'b=2, a=1,c=x=y', parsed: { b: '2', a: '1', c: 'x=y' }, canonical: 'a=1,b=2,c=x=y' },
  { type: 'keyValue', raw: 'empty=', parsed: { empty: '' }, canonical: 'empty=' },
  { type: 'featureGates', raw: 'Key=true,Other=false', parsed: { Key: true, Other: false }, canonical: 'Key=true,Other=false' },
  { type: 'featureGates', raw: 'agent:Key=True', parsed: { 'agent:Key': true }, canonical: 'agent:Key=true' },
  { type: 'multimap', raw: 'a:hello,b:again,a:world', parsed: { a: ['hello', 'world'], b: ['again'] }, canonical: 'a:hello,a:world,b:again' },
  { type: 'multimap', raw: 'Authorization:Bearer x:y', parsed: { Authorization: ['Bearer x:y'] }, canonical: 'Authorization:Bearer x:y' },
  {
    type: 'taints',
    raw: 'dedicated=gpu:NoSchedule,node.orch.io/special:NoExecute',
    parsed: [
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'node.orch.io/special', effect: 'NoExecute' },
    ],
    canonical: 'dedicated=gpu:NoSchedule,node.orch.io/special:NoExecute',
  },
  { type: 'taints', raw: 'k=:PreferNoSchedule', parsed: [{ key: 'k', value: '', effect: 'PreferNoSchedule' }], canonical: 'k=:PreferNoSchedule' },
  {
    type: 'evictionThresholds',
    raw: 'memory.available<1Gi, nodefs.available < 10%',
    parsed: [
      { signal: 'memory.available', operator: 'LessThan', value: { quantity: q('1Gi') } },
      { signal: 'nodefs.available', operator: 'LessThan', value: { percentage: 10 } },
    ],
    canonical: 'memory.available<1Gi,nodefs.available<10%',
  },
  {
    type: 'evictionThresholds',
    raw: 'imagefs.available<7.5%,nodefs.inodesFree<0%,pid.available<1000',
    parsed: [
      { signal: 'imagefs.available', operator: 'LessThan', value: { percentage: 7.5 } },
      { signal: 'nodefs.inodesFree', operator: 'LessThan', value: { percentage: 0 } },
      { signal: 'pid.available', operator: 'LessThan', value: { quantity: q('1000') } },
    ],
    canonical: 'imagefs.available<7.5%,nodefs.inodesFree<0%,pid.available<1k',
  },
  {
    type: 'evictionDurations',
    raw: 'memory.available=90s,imagefs.available=0',
    parsed: { 'memory.available': { ms: 90000, text: '1m30s' }, 'imagefs.available': { ms: 0, text: '0s' } },
    canonical: 'memory.available=1m30s,imagefs.available=0s',
  },
  {
    type: 'evictionQuantities',
    raw: 'imagefs.available=2Gi,nodefs.available=5%,memory.available=0Mi',
    parsed: { 'imagefs.available': q('2Gi'), 'nodefs.available': { percentage: 5 }, 'memory.available': q('0') },
    canonical: 'imagefs.available=2Gi,nodefs.available=5%,memory.available=0',
  },
  { type: 'percentPairs', raw: 'memory=50%', parsed: { memory: 50 }, canonical: 'memory=50%' },
  { type: 'percentPairs', raw: 'memory=0%,cpu=100%', parsed: { memory: 0, cpu: 100 }, canonical: 'cpu=100%,memory=0%' },
  {
    type: 'reservedMemory',
    raw: '0:memory=1Gi,hugepages-1M=2Gi',
    parsed: [{ numaNode: 0, limits: { memory: q('1Gi'), 'hugepages-1M': q('2Gi') } }],
    canonical: '0:memory=1Gi,hugepages-1M=2Gi',
  },
  {
    type: 'reservedMemory',
    raw: '0:memory=1Gi;1:memory=512Mi',
    parsed: [
      { numaNode: 0, limits: { memory: q('1Gi') } },
      { numaNode: 1, limits: { memory: q('512Mi') } },
    ],
    canonical: '0:memory=1Gi;1:memory=512Mi',
  },
  { type: 'portRange', raw: '30000-32767', parsed: { base: 30000, size: 2768 }, canonical: '30000-32767' },
  { type: 'portRange', raw: '8080', parsed: { base: 8080, size: 1 }, canonical: '8080-8080' },
  { type: 'portRange', raw: '30000+10', parsed: { base: 30000, size: 11 }, canonical: '30000-30010' },
  { type: 'cidrs', raw: '10.0.0.0/24', parsed: ['10.0.0.0/24'], canonical: '10.0.0.0/24' },
  { type: 'cidrs', raw: '10.96.0.0/12,fd00::/108', parsed: ['10.96.0.0/12', 'fd00::/108'], canonical: '10.96.0.0/12,fd00::/108' },
  { type: 'ip', raw: '192.168.1.10', parsed: '192.168.1.10', canonical: '192.168.1.10' },
  { type: 'ip', raw: '::1', parsed: '::1', canonical: '::1' },
  { type: 'tlsVersion', raw: 'VersionTLS12', parsed: 'VersionTLS12', canonical: 'VersionTLS12' },
  {
    type: 'cipherSuites',
    raw: 'TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_AES_128_CBC_SHA',
    parsed: ['TLS_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_128_CBC_SHA'],
    canonical: 'TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_AES_128_CBC_SHA',
  },
  { type: 'int32Slice', raw: '23,24', parsed: [23, 24], canonical: '23,24' },
  { type: 'int32Slice', raw: '[]', parsed: [], canonical: '' },
  { type: 'vmodule', raw: 'file*=2,other=3', parsed: [{ pattern: 'file*', level: 2 }, { pattern: 'other', level: 3 }], canonical: 'file*=2,other=3' },
  { type: 'version', raw: '', parsed: { mode: 'print' }, canonical: 'true' },
  { type: 'version', raw: 'true', parsed: { mode: 'print' }, canonical: 'true' },
  { type: 'version', raw: 'raw', parsed: { mode: 'raw' }, canonical: 'raw' },
  { type: 'version', raw: 'false', parsed: undefined, canonical: 'false' },
  { type: 'version', raw: 'v1.32.0-orch.1+abc', parsed: { mode: 'set', version: 'v1.32.0-orch.1+abc' }, canonical: 'v1.32.0-orch.1+abc' },
  { type: 'dryRun', raw: 'none', parsed: 'none', canonical: 'none' },
  { type: 'dryRun', raw: 'server', parsed: 'server', canonical: 'server' },
  { type: 'dryRun', raw: 'client', parsed: 'client', canonical: 'client' },
  { type: 'dryRun', raw: 'unchanged', parsed: 'unchanged', canonical: 'unchanged' },
  { type: 'stringToString', raw: 'a=1', parsed: { a: '1' }, canonical: 'a=1' },
  {
    type: 'stringToString',
    raw: 'apiserver_request_total,verb=GET,LIST',
    parsed: { 'apiserver_request_total,verb': 'GET,LIST' },
    canonical: 'apiserver_request_total,verb=GET,LIST',
  },
  {
    type: 'stringToString',
    raw: '"m1,l1=a,b","m2,l2=c"',
    parsed: { 'm1,l1': 'a,b', 'm2,l2': 'c' },
    canonical: '"m1,l1=a,b","m2,l2=c"',
  },
  { type: 'stringToString', raw: '[]', parsed: {}, canonical: '' },
];

describe('parseOptionValue accepts', () => {
  it.each(good.map((g) => [g.type, g.raw, g]))('%s %j', (_type, _raw, g) => {
    const { type, extra, raw, parsed, canonical } = g as Good;
    const s = spec(type, extra);
    const value = parseOptionValue(s, raw);
    expect(value).toEqual(parsed);
    expect(formatOptionValue(s, value)).toBe(canonical);
    // The canonical text is itself accepted and means the same thing.
    if (canonical !== '' || type === 'stringToString' || type === 'int32Slice') {
      expect(parseOptionValue(s, canonical)).toEqual(parsed);
    }
  });
});

interface Bad {
  type: ValueType;
  extra?: Partial<OptionSpec>;
  raw: string;
  reason: string;
}

const bad: Bad[] = [
  { type: 'string', extra: { enum: ['json', 'merge', 'strategic'] }, raw: 'xml', reason: 'not one of the accepted values' },
  { type: 'strings', extra: { enum: ['RS256', 'ES256'] }, raw: 'RS256,HS256', reason: '"HS256" is not one of the accepted values' },
  { type: 'bool', raw: 'yes', reason: 'not a boolean' },
  { type: 'bool', raw: 'tRUE', reason: 'not a boolean' },
  { type: 'int', raw: '1.5', reason: 'not an integer' },
  { type: 'int', raw: '12abc', reason: 'not an integer' },
  { type: 'int', raw: '9007199254740992', reason: 'out of range' },
  { type: 'int', extra: { min: 0, max: 65535 }, raw: '70000', reason: 'must be between 0 and 65535' },
  { type: 'int32', raw: '2147483648', reason: 'out of range' },
  { type: 'int32', extra: { min: 2 }, raw: '1', reason: 'must be at least 2' },
  { type: 'float', raw: 'abc', reason: 'not a number' },
  { type: 'float', raw: 'NaN', reason: 'not a number' },
  { type: 'float', extra: { min: 0, max: 0.02 }, raw: '0.5', reason: 'must be between 0 and 0.02' },
  { type: 'duration', raw: '5x', reason: 'not a duration' },
  { type: 'duration', raw: '10', reason: 'not a duration' },
  { type: 'duration', raw: '', reason: 'not a duration' },
  { type: 'quantity', raw: '1GB', reason: 'not a quantity' },
  { type: 'quantity', raw: 'abc', reason: 'not a quantity' },
  { type: 'quantity', raw: '1.2.3', reason: 'not a quantity' },
  { type: 'quantity', raw: '', reason: 'not a quantity' },
  { type: 'keyValue', raw: 'a=b,c', reason: 'malformed pair "c", expect key=value' },
  { type: 'keyValue', raw: '=b', reason: 'empty key' },
  { type: 'featureGates', raw: 'Key', reason: 'missing bool value for Key' },
  { type: 'featureGates', raw: 'Key=maybe', reason: 'invalid value of Key=maybe' },
  { type: 'multimap', raw: 'novalue', reason: 'malformed pair "novalue", expect key:value' },
  { type: 'taints', raw: 'key=value:Sometimes', reason: 'invalid taint effect: Sometimes, unsupported taint effect' },
  { type: 'taints', raw: 'key=value', reason: 'invalid taint spec: key=value' },
  { type: 'taints', raw: 'a=b=c:NoSchedule', reason: 'invalid taint spec: a=b=c:NoSchedule' },
  { type: 'taints', raw: '-bad-:NoSchedule', reason: 'invalid taint spec: -bad-:NoSchedule' },
  { type: 'taints', raw: `${'k'.repeat(64)}:NoSchedule`, reason: 'no more than 63 characters' },
  { type: 'taints', raw: 'Bad_Prefix.io/k:NoSchedule', reason: 'prefix part must be a lowercase DNS subdomain' },
  { type: 'taints', raw: 'k=bad value:NoSchedule', reason: 'a label value must consist of' },
  { type: 'evictionThresholds', raw: 'memory.available=1Gi', reason: 'expect string<string' },
  { type: 'evictionThresholds', raw: 'memory.free<1Gi', reason: 'unsupported eviction signal memory.free' },
  { type: 'evictionThresholds', raw: 'nodefs.available<-5%', reason: 'eviction percentage threshold nodefs.available must be >= 0%: -5%' },
  { type: 'evictionThresholds', raw: 'nodefs.available<101%', reason: 'eviction percentage threshold nodefs.available must be <= 100%: 101%' },
  { type: 'evictionThresholds', raw: 'memory.available<0', reason: 'eviction threshold memory.available must be positive: 0' },
  { type: 'evictionThresholds', raw: 'memory.available<-1Gi', reason: 'eviction threshold memory.available must be positive: -1Gi' },
  { type: 'evictionThresholds', raw: 'memory.available<1GB', reason: 'quantities must match the regular expression' },
  { type: 'evictionDurations', raw: 'memory.available=x', reason: 'time: invalid duration "x"' },
  { type: 'evictionDurations', raw: 'memory.available=-1s', reason: 'invalid eviction grace period specified: -1s, must be a positive value' },
  { type: 'evictionDurations', raw: 'cpu.available=1s', reason: 'unsupported eviction signal cpu.available' },
  { type: 'evictionQuantities', raw: 'nodefs.available=0%', reason: 'eviction percentage minimum reclaim nodefs.available must be positive: 0%' },
  { type: 'evictionQuantities', raw: 'memory.available=-1Mi', reason: 'negative eviction minimum reclaim specified for memory.available' },
  { type: 'percentPairs', raw: 'memory=50', reason: 'percentage expected' },
  { type: 'percentPairs', raw: 'memory=150%', reason: 'between 0 and 100' },
  { type: 'reservedMemory', raw: 'memory=1Gi', reason: 'the reserved memory has incorrect format' },
  { type: 'reservedMemory', raw: 'x:memory=1Gi', reason: 'NUMA node ID must be a non-negative integer' },
  { type: 'reservedMemory', raw: '0:cpu=1', reason: 'unknown memory type "cpu"' },
  { type: 'reservedMemory', raw: '0:memory=lots', reason: '"lots" is not a quantity' },
  { type: 'reservedMemory', raw: '0:memory', reason: 'expected type=quantity' },
  { type: 'portRange', raw: '32767-30000', reason: 'end port cannot be less than start port' },
  { type: 'portRange', raw: '0-100', reason: 'ports must be between 1 and 65535' },
  { type: 'portRange', raw: '30000-70000', reason: 'ports must be between 1 and 65535' },
  { type: 'portRange', raw: 'a-b', reason: 'not a port range' },
  { type: 'cidrs', raw: '10.0.0.0', reason: '"10.0.0.0" is not a CIDR' },
  { type: 'cidrs', raw: '10.0.0.0/33', reason: 'at most 32' },
  { type: 'cidrs', raw: 'fd00::/129', reason: 'at most 128' },
  { type: 'cidrs', raw: '10.0.0.0/24,10.1.0.0/24', reason: 'one IPv4 and one IPv6' },
  { type: 'cidrs', raw: '10.0.0.0/24,fd00::/64,10.1.0.0/24', reason: 'at most two CIDRs' },
  { type: 'ip', raw: '300.1.1.1', reason: 'not an IPv4 or IPv6 address' },
  { type: 'ip', raw: 'localhost', reason: 'not an IPv4 or IPv6 address' },
  { type: 'tlsVersion', raw: 'TLS1.2', reason: 'unknown TLS version' },
  { type: 'cipherSuites', raw: 'TLS_AES_128_GCM_SHA256,RC4-SHA', reason: "cipher suite RC4-SHA not supported or doesn't exist" },
  { type: 'int32Slice', raw: '23,x', reason: '"x" is not a 32-bit integer' },
  { type: 'int32Slice', raw: '4294967296', reason: 'is not a 32-bit integer' },
  { type: 'vmodule', raw: 'file=x', reason: 'is not a non-negative integer' },
  { type: 'vmodule', raw: 'file=-1', reason: 'is not a non-negative integer' },
  { type: 'vmodule', raw: 'file', reason: 'is not of the form pattern=N' },
  { type: 'version', raw: 'v1.2', reason: 'not a semantic version' },
  { type: 'version', raw: '1.2.3', reason: 'not true, false, raw or a version' },
  { type: 'dryRun', raw: 'true', reason: 'not a dry-run mode' },
  { type: 'dryRun', raw: 'Server', reason: 'not a dry-run mode' },
  { type: 'stringToString', raw: 'novalue', reason: 'must be formatted as key=value' },
  { type: 'stringToString', raw: 'a=1,b,c=2', reason: 'b must be formatted as key=value' },
  { type: 'stringToString', raw: 'a=1,"b=2', reason: 'extraneous or missing "' },
];

describe('parseOptionValue refuses', () => {
  it.each(bad.map((b) => [b.type, b.raw, b]))('%s %j', (_type, _raw, b) => {
    const { type, extra, raw, reason } = b as Bad;
    const s = spec(type, extra);
    let error: unknown;
    try {
      parseOptionValue(s, raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OptionValueError);
    const message = (error as Error).message;
    expect(message).toContain(`for --${s.name}: `);
    expect(message).toContain(`invalid value ${JSON.stringify(raw)}`);
    expect(message).toContain(reason);
    expect(message).toContain(`; expected ${describeAcceptedForm(s)}`);
  });
});

describe('error and help texts', () => {
  it('a bad duration reads as the brief shows', () => {
    expect(() => parseOptionValue(spec('duration', { name: 'sync-period' }), '5x')).toThrow(
      'invalid value "5x" for --sync-period: not a duration; expected a Go duration such as 300ms, 1m0s or 1h30m',
    );
  });

  it('an enum error lists the accepted values', () => {
    expect(() => parseOptionValue(spec('string', { name: 'type', enum: ['json', 'merge', 'strategic'] }), 'xml')).toThrow(
      'invalid value "xml" for --type: not one of the accepted values; expected one of json, merge, strategic',
    );
  });

  it.each([
    ['int', { min: 0, max: 65535 }, 'an integer that is between 0 and 65535'],
    ['int32', {}, 'an integer between -2147483648 and 2147483647'],
    ['tlsVersion', {}, 'one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13'],
    ['taints', {}, 'comma-separated taints <key>=<value>:<effect> or <key>:<effect>, the effect one of NoSchedule, PreferNoSchedule, NoExecute'],
  ] as const)('describes %s', (type, extra, text) => {
    expect(describeAcceptedForm(spec(type, extra))).toBe(text);
  });

  it('every value type has a description', () => {
    const types: ValueType[] = [
      'string', 'strings', 'bool', 'int', 'int32', 'float', 'duration', 'quantity', 'keyValue', 'featureGates',
      'multimap', 'taints', 'evictionThresholds', 'evictionDurations', 'evictionQuantities', 'percentPairs',
      'reservedMemory', 'portRange', 'cidrs', 'ip', 'tlsVersion', 'cipherSuites', 'int32Slice', 'vmodule',
      'version', 'dryRun', 'stringToString',
    ];
    for (const type of types) expect(describeAcceptedForm(spec(type)).length).toBeGreaterThan(5);
  });
});

describe('repeated flags', () => {
  const repeat = (type: ValueType, first: string, second: string) => {
    const s = spec(type);
    return parseOptionValue(s, second, parseOptionValue(s, first));
  };

  it.each([
    ['strings', 'a,b', 'c', ['a', 'b', 'c']],
    ['keyValue', 'a=1,b=2', 'b=3', { a: '1', b: '3' }],
    ['featureGates', 'A=true', 'B=false', { A: true, B: false }],
    ['multimap', 'a:1', 'a:2,b:3', { a: ['1', '2'], b: ['3'] }],
    ['stringToString', 'x,y=1', 'z,w=2', { 'x,y': '1', 'z,w': '2' }],
    ['int32Slice', '23', '24', [23, 24]],
    ['percentPairs', 'memory=10%', 'memory=20%', { memory: 20 }],
    ['cipherSuites', 'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384']],
    ['int', '1', '2', 2],
    ['duration', '1s', '2s', { ms: 2000, text: '2s' }],
  ] as const)('%s accumulates or replaces', (type, first, second, expected) => {
    expect(repeat(type, first, second)).toEqual(expected);
  });

  it('a repeated eviction signal overwrites the earlier threshold', () => {
    const value = repeat('evictionThresholds', 'memory.available<1Gi,nodefs.available<10%', 'memory.available<2Gi');
    expect(formatOptionValue(spec('evictionThresholds'), value)).toBe('memory.available<2Gi,nodefs.available<10%');
  });

  it('reserved memory entries append', () => {
    const value = repeat('reservedMemory', '0:memory=1Gi', '1:memory=2Gi');
    expect(formatOptionValue(spec('reservedMemory'), value)).toBe('0:memory=1Gi;1:memory=2Gi');
  });

  it('taints append', () => {
    const value = repeat('taints', 'a:NoSchedule', 'b=c:NoExecute');
    expect(formatOptionValue(spec('taints'), value)).toBe('a:NoSchedule,b=c:NoExecute');
  });
});

describe('cipher suites for Node', () => {
  const available = new Set(getCiphers().map((c) => c.toUpperCase()));

  it('maps every secure Go suite to a cipher this Node build knows', () => {
    const secure = [
      'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256',
      'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
      'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
      'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
      'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
      'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
    ];
    for (const name of secure) expect(available).toContain(CIPHER_SUITE_OPENSSL_NAMES[name].toUpperCase());
  });

  it('builds the OpenSSL cipher list in the given order', () => {
    expect(toOpenSslCipherList(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_RSA_WITH_AES_256_GCM_SHA384'])).toBe(
      'ECDHE-RSA-AES128-GCM-SHA256:AES256-GCM-SHA384',
    );
  });
});
