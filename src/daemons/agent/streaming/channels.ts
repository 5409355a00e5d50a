/**
 * The WebSocket channel subprotocols of exec and attach (k8s.io/apimachinery wsstream and the
 * kubelet's remotecommand websocket server): each message starts with its channel number (stdin 0,
 * stdout 1, stderr 2, error 3, resize 4), as a byte (`channel.k8s.io`, `v4.channel.k8s.io`,
 * `v5.channel.k8s.io`) or as an ASCII digit before base64 data (`base64.channel.k8s.io`,
 * `v4.base64.channel.k8s.io`). v4 and later write a Status JSON on the error channel, older ones a
 * plain message; v5 adds the close message (channel 255, then the number of the channel the client
 * closed: how stdin ends). Pure.
 */

export const Channel = {stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255} as const;

/** What the agent speaks, in no particular order: the client's order of preference decides. */
export const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io', 'channel.k8s.io', 'base64.channel.k8s.io'] as const;

/** kubectl 1.31+ port-forward: SPDY frames carried in binary WebSocket messages. */
export const SPDY_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

export interface ChannelProtocol {
  name: string;
  base64: boolean;
  /** The error channel carries a Status object (v4+) rather than plain text. */
  statusErrors: boolean;
  /** The client can close single channels (v5). */
  closeMessages: boolean;
}

export function channelProtocol(name: string): ChannelProtocol {
  const version = /^v(\d+)\./.exec(name)?.[1];
  return {name, base64: name.includes('base64'), statusErrors: Number(version ?? 1) >= 4, closeMessages: Number(version ?? 1) >= 5};
}

/**
 * The first of the client's protocols that `supported` has (upstream's handshake); '' (binary, v1)
 * when the client offered none; undefined when none of its offers is supported.
 */
export function chooseProtocol(offered: readonly string[], supported: readonly string[]): string | undefined {
  if (offered.length === 0) return '';
  return offered.find((p) => supported.includes(p));
}

export function encodeChannelMessage(protocol: ChannelProtocol, channel: number, data: Buffer): Buffer | string {
  if (protocol.base64) return String.fromCharCode(48 + channel) + data.toString('base64');
  return Buffer.concat([Buffer.from([channel]), data]);
}

export type ChannelMessage = {kind: 'data'; channel: number; data: Buffer} | {kind: 'close'; channel: number} | {kind: 'ignore'};

export function decodeChannelMessage(protocol: ChannelProtocol, message: Buffer): ChannelMessage {
  if (message.length === 0) return {kind: 'ignore'};
  if (protocol.base64) {
    const channel = message[0] - 48;
    return {kind: 'data', channel, data: Buffer.from(message.subarray(1).toString('latin1'), 'base64')};
  }
  const channel = message[0];
  if (channel === Channel.close && protocol.closeMessages) {
    return message.length === 2 ? {kind: 'close', channel: message[1]} : {kind: 'ignore'};
  }
  return {kind: 'data', channel, data: message.subarray(1)};
}
