/**
 * `--egress-selector-config-file`: upstream's EgressSelectorConfiguration (apiserver.<domain>,
 * v1beta1 or v1alpha1). Selections `cluster`, `controlplane` (`master` is its old name) and `etcd`;
 * proxy protocols Direct (dial as usual) and HTTPConnect (a CONNECT tunnel through a konnectivity
 * style proxy, over TCP with http/https or over a unix socket). GRPC, the other konnectivity mode,
 * is refused with a clear error. orch routes the `cluster` selection (the aggregator's calls to
 * extension servers and its availability checks) through it; `controlplane` and `etcd` may only be
 * Direct here.
 */
import {readFile} from 'node:fs/promises';
import {connect as netConnect, isIP, type Socket} from 'node:net';
import {connect as tlsConnect} from 'node:tls';
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import {UserError} from '../../../lib/errors.js';

export type SelectionName = 'cluster' | 'controlplane' | 'etcd';

export interface EgressConnection {
  proxyProtocol: 'Direct' | 'HTTPConnect' | 'GRPC';
  transport?: {
    tcp?: {url: string; tlsConfig?: {caBundle?: string; clientKey?: string; clientCert?: string}};
    uds?: {udsName: string};
  };
}

export interface EgressSelector {
  selections: Map<SelectionName, EgressConnection>;
  /** A dialer for a selection: undefined (dial directly) for Direct or an absent selection. */
  dialer(name: SelectionName): ((host: string, port: number) => Promise<Socket> | undefined) | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses and validates the file; every problem at once, each with its field path, as upstream's validation. */
export function parseEgressSelector(text: string, file: string): Map<SelectionName, EgressConnection> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new UserError(`--egress-selector-config-file: ${file}: ${(error as Error).message}`);
  }
  const problems: string[] = [];
  const group = `apiserver.${names().domain}`;
  if (!isObject(doc)) throw new UserError(`--egress-selector-config-file: ${file}: not an EgressSelectorConfiguration object`);
  if (doc.apiVersion !== `${group}/v1beta1` && doc.apiVersion !== `${group}/v1alpha1`) {
    problems.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? '')}: supported values: "${group}/v1beta1", "${group}/v1alpha1"`);
  }
  if (doc.kind !== 'EgressSelectorConfiguration') problems.push(`kind: Unsupported value: ${JSON.stringify(doc.kind ?? '')}: supported values: "EgressSelectorConfiguration"`);
  const selections = new Map<SelectionName, EgressConnection>();
  const list = Array.isArray(doc.egressSelections) ? doc.egressSelections : [];
  list.forEach((entry, i) => {
    const at = `egressSelections[${i}]`;
    if (!isObject(entry)) return void problems.push(`${at}: Invalid value: not an object`);
    const raw = entry.name === 'master' ? 'controlplane' : entry.name;
    if (raw !== 'cluster' && raw !== 'controlplane' && raw !== 'etcd') {
      return void problems.push(`${at}.name: Unsupported value: ${JSON.stringify(entry.name ?? '')}: supported values: "cluster", "controlplane", "etcd"`);
    }
    if (selections.has(raw)) return void problems.push(`${at}.name: Duplicate value: ${JSON.stringify(raw)}`);
    const connection = isObject(entry.connection) ? entry.connection : {};
    const protocol = connection.proxyProtocol;
    const transport = isObject(connection.transport) ? connection.transport : undefined;
    const field = `${at}.connection`;
    if (protocol === 'Direct') {
      if (transport) problems.push(`${field}.transport: Invalid value: "Direct": transport must be empty for proxyProtocol Direct`);
      selections.set(raw, {proxyProtocol: 'Direct'});
      return;
    }
    if (protocol === 'GRPC') {
      problems.push(`${field}.proxyProtocol: Unsupported value: "GRPC": orch supports "Direct" and "HTTPConnect" (GRPC konnectivity is not implemented)`);
      return;
    }
    if (protocol !== 'HTTPConnect') {
      return void problems.push(`${field}.proxyProtocol: Unsupported value: ${JSON.stringify(protocol ?? '')}: supported values: "Direct", "HTTPConnect", "GRPC"`);
    }
    if (raw !== 'cluster') problems.push(`${field}.proxyProtocol: Invalid value: "HTTPConnect": orch routes only the cluster selection through a proxy; ${raw} must be Direct`);
    const tcp = transport && isObject(transport.tcp) ? transport.tcp : undefined;
    const uds = transport && isObject(transport.uds) ? transport.uds : undefined;
    if (!tcp && !uds) return void problems.push(`${field}.transport: Required value: transport must be set for HTTPConnect`);
    if (tcp && uds) return void problems.push(`${field}.transport: Invalid value: only one of tcp or uds may be set`);
    if (uds) {
      if (typeof uds.udsName !== 'string' || uds.udsName === '') return void problems.push(`${field}.transport.uds.udsName: Required value`);
      selections.set(raw, {proxyProtocol: 'HTTPConnect', transport: {uds: {udsName: uds.udsName}}});
      return;
    }
    const url = typeof tcp!.url === 'string' ? tcp!.url : '';
    if (!/^https?:\/\/[^/]+/.test(url)) return void problems.push(`${field}.transport.tcp.url: Invalid value: ${JSON.stringify(url)}: supported URL schemes are http and https`);
    const tls = isObject(tcp!.tlsConfig) ? tcp!.tlsConfig : undefined;
    if (url.startsWith('https:') && !tls) return void problems.push(`${field}.transport.tcp.tlsConfig: Required value: tlsConfig must be present when using HTTPS`);
    const tlsConfig = tls ? {caBundle: str(tls.caBundle), clientKey: str(tls.clientKey), clientCert: str(tls.clientCert)} : undefined;
    if (tlsConfig && Boolean(tlsConfig.clientKey) !== Boolean(tlsConfig.clientCert)) problems.push(`${field}.transport.tcp.tlsConfig: Invalid value: clientCert and clientKey must be set together`);
    selections.set(raw, {proxyProtocol: 'HTTPConnect', transport: {tcp: {url, tlsConfig}}});
  });
  if (problems.length > 0) throw new UserError(`--egress-selector-config-file: ${file}:\n  ${problems.join('\n  ')}`);
  return selections;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

async function readTls(tls: {caBundle?: string; clientKey?: string; clientCert?: string} | undefined): Promise<{ca?: string; cert?: string; key?: string}> {
  const read = async (path?: string) => {
    if (!path) return undefined;
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      throw new UserError(`--egress-selector-config-file: cannot read ${path}: ${(error as Error).message}`);
    }
  };
  return {ca: await read(tls?.caBundle), cert: await read(tls?.clientCert), key: await read(tls?.clientKey)};
}

/**
 * Opens a tunnel: connect to the proxy (TCP, TLS or a unix socket), send `CONNECT host:port`, and
 * hand back the socket once the proxy answers 200.
 */
export function httpConnect(open: () => Socket, host: string, port: number, timeoutMs = 10_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = open();
    const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error(`egress proxy: no answer to CONNECT ${authority}`)), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      clearTimeout(timer);
      const statusLine = buffered.subarray(0, buffered.indexOf('\r\n')).toString('latin1');
      if (!/^HTTP\/1\.[01] 200/.test(statusLine)) return fail(new Error(`egress proxy refused CONNECT ${authority}: ${statusLine}`));
      const rest = buffered.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', fail);
    const send = () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    if ((socket as {connecting?: boolean}).connecting || (socket as {pending?: boolean}).pending) socket.once(socket.constructor.name === 'TLSSocket' ? 'secureConnect' : 'connect', send);
    else send();
  });
}

export async function loadEgressSelector(file: string): Promise<EgressSelector> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`--egress-selector-config-file: cannot read ${file}: ${(error as Error).message}`);
  }
  const selections = parseEgressSelector(text, file);
  const tls = new Map<SelectionName, {ca?: string; cert?: string; key?: string}>();
  for (const [name, c] of selections) if (c.transport?.tcp?.url.startsWith('https:')) tls.set(name, await readTls(c.transport.tcp.tlsConfig));
  return {
    selections,
    dialer(name) {
      const c = selections.get(name);
      if (!c || c.proxyProtocol === 'Direct') return undefined;
      const transport = c.transport!;
      const open = (): Socket => {
        if (transport.uds) return netConnect({path: transport.uds.udsName});
        const url = new URL(transport.tcp!.url);
        const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
        const host = url.hostname.replace(/^\[|\]$/g, '');
        if (url.protocol === 'https:') return tlsConnect({host, port, ...(isIP(host) ? {} : {servername: host}), ...tls.get(name)});
        return netConnect({host, port});
      };
      return (host, port) => httpConnect(open, host, port);
    },
  };
}
