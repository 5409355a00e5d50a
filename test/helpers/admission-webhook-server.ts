/**
 * Admission webhook servers for tests: HTTPS on 127.0.0.1 (port 0) with a certificate from a test
 * CA, answering each AdmissionReview with what the test's handler returns (a response object, raw
 * text, or nothing until the connection is closed), and recording what they received.
 */
import {createServer, type Server} from 'node:https';
import type {AddressInfo} from 'node:net';
import type {IncomingHttpHeaders} from 'node:http';
import {generateCa, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';

export interface ReceivedReview {
  review: any;
  headers: IncomingHttpHeaders;
  url: string;
  /** The common name of the client certificate the caller presented, if any. */
  peerCn?: string;
}

/** What a handler answers: a `response` object (wrapped in a review echoing the uid), raw text, or 'hang'. */
export type WebhookAnswer = {response: Record<string, unknown>; apiVersion?: string; kind?: string} | {raw: string; status?: number} | 'hang';

export interface TestWebhook {
  url: string;
  port: number;
  received: ReceivedReview[];
  close(): Promise<void>;
}

export interface TestWebhookCa {
  ca: KeyPairPem;
  caBundle: string;
  serving: KeyPairPem;
}

export async function webhookCa(hosts: string[] = ['localhost']): Promise<TestWebhookCa> {
  const ca = await generateCa({commonName: 'webhook-test-ca'});
  const serving = await generateServingCertificate(ca, {hosts, ips: ['127.0.0.1']});
  return {ca, caBundle: Buffer.from(ca.certPem).toString('base64'), serving};
}

/** A base64 JSON patch, as webhooks send it. */
export const jsonPatch = (operations: unknown[]) => Buffer.from(JSON.stringify(operations)).toString('base64');

export async function startWebhook(
  tls: TestWebhookCa,
  handler: (review: any, received: ReceivedReview) => WebhookAnswer | Promise<WebhookAnswer>,
  options: {requestCert?: boolean} = {},
): Promise<TestWebhook> {
  const received: ReceivedReview[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer(
    {cert: tls.serving.certPem, key: tls.serving.keyPem, ca: options.requestCert ? tls.ca.certPem : undefined, requestCert: options.requestCert, rejectUnauthorized: false},
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
        const record: ReceivedReview = {review, headers: req.headers, url: req.url ?? '', peerCn: peer && 'subject' in peer && peer.subject ? String(peer.subject.CN) : undefined};
        received.push(record);
        const answer = await handler(review, record);
        if (answer === 'hang') {
          hanging.add(res);
          return;
        }
        if ('raw' in answer) {
          res.writeHead(answer.status ?? 200, {'Content-Type': 'application/json'});
          res.end(answer.raw);
          return;
        }
        res.writeHead(200, {'Content-Type': 'application/json'});
        res.end(JSON.stringify({apiVersion: answer.apiVersion ?? review.apiVersion, kind: answer.kind ?? 'AdmissionReview', response: {uid: review.request.uid, ...answer.response}}));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
