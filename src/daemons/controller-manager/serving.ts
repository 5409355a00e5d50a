/**
 * The controller manager's own HTTPS endpoint (--bind-address:--secure-port, 10257): /healthz,
 * /livez and /readyz with the API server's exact formats (the same HealthRegistry, plus a
 * `leaderElection` check), and /metrics in the Prometheus text format. Paths in
 * --authorization-always-allow-paths are served to anyone; delegated authentication and
 * authorization through the API server are not built yet, so any other path is refused with a
 * message that says so.
 */
import type {Socket} from 'node:net';
import {hostname} from 'node:os';
import {readFile} from 'node:fs/promises';
import type {Registry} from 'prom-client';
import {HealthRegistry, LogCheck, createHealthHandler, pingCheck, type HealthCheck} from '../apiserver/health/index.js';
import {writeStatusObject} from '../apiserver/filters/index.js';
import {createSecureServer, tlsServingOptions, trackConnections, type SecureServer, type SecureServingOptions} from '../serving/secure-serving.js';

export interface ServingConfig extends SecureServingOptions {
  bindAddress: string;
  securePort: number;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  alwaysAllowPaths: string[];
}

export class ControllerManagerServing {
  readonly health = new HealthRegistry();
  private readonly logCheck = new LogCheck();
  private server?: SecureServer;
  private sockets = new Set<Socket>();
  private port = 0;

  constructor(
    private readonly config: ServingConfig,
    private readonly metrics: Registry,
    leaderElectionCheck?: HealthCheck,
  ) {
    this.health.addHealthChecks(pingCheck, this.logCheck, ...(leaderElectionCheck ? [leaderElectionCheck] : []));
  }

  get url(): string {
    const host = ['0.0.0.0', '::', ''].includes(this.config.bindAddress) ? '127.0.0.1' : this.config.bindAddress;
    return `https://${host.includes(':') ? `[${host}]` : host}:${this.port || this.config.securePort}`;
  }

  private async certificate(): Promise<{cert: string; key: string}> {
    const c = this.config;
    if (c.tlsCertFile && c.tlsPrivateKeyFile) {
      return {cert: await readFile(c.tlsCertFile, 'utf8'), key: await readFile(c.tlsPrivateKeyFile, 'utf8')};
    }
    // Self-signed (by a CA of its own in the cert dir), created once and reused.
    const {ensureServingCertificates} = await import('../apiserver/pki/cert-dir.js');
    const {servingCertificateNames} = await import('../apiserver/pki/serving-names.js');
    const generated = await ensureServingCertificates(c.certDir, servingCertificateNames({hostname: hostname(), extra: [c.bindAddress]}));
    return {cert: generated.serving.certPem + generated.ca.certPem, key: generated.serving.keyPem};
  }

  async start(): Promise<void> {
    if (this.config.securePort === 0) return; // 0 turns serving off for the controller manager
    const {cert, key} = await this.certificate();
    const healthHandler = createHealthHandler(this.health);
    const allowed = (path: string) => this.config.alwaysAllowPaths.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
    this.server = await createSecureServer(this.config, await tlsServingOptions(this.config, key, cert), async (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      // An allowed root also allows its individual checks (/livez/ping under /livez).
      if (!allowed(path) && !allowed('/' + (path.split('/')[1] ?? ''))) {
        writeStatusObject(res, {
          kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', details: {},
          message: `forbidden: ${path} needs delegated authorization through the API server, which is not built yet; add it to --authorization-always-allow-paths to serve it`,
        });
        return;
      }
      if (healthHandler(req, res)) return;
      if (path === '/metrics') {
        res.writeHead(200, {'Content-Type': this.metrics.contentType});
        res.end(await this.metrics.metrics());
        return;
      }
      res.writeHead(404, {'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff'});
      res.end('404 page not found\n');
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.config.securePort, this.config.bindAddress || undefined, () => resolve());
    });
    this.port = (this.server.address() as {port: number}).port;
    this.sockets = trackConnections(this.server);
  }

  async stop(): Promise<void> {
    this.logCheck.stop();
    if (!this.server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
