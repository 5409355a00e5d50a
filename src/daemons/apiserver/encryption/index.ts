/**
 * Encryption at rest as the API server runs it: `--encryption-provider-config` read at start (a bad
 * file stops the start), the KMS providers connected to their plugins, their health checks, and with
 * `--encryption-provider-config-automatic-reload` the file watched and swapped in when it changes.
 *
 * Health checks as upstream names them: one `kms-provider-<i>` per KMS provider (in file order)
 * without reload; with reload a single `kms-providers` check over whatever providers are in force,
 * since their number and names may change (which is why the seed says distinct plugins can no
 * longer be told apart through the health endpoints). A reloaded file takes over only once its KMS
 * plugins answer; a broken or unhealthy one is logged and the running configuration kept.
 */
import {readFile} from 'node:fs/promises';
import type {Clock} from '../../shared/clock.js';
import {ConfigFileReloader} from '../../shared/config-file-reloader.js';
import type {HealthCheck} from '../../shared/health/index.js';
import type {Store} from '../storage/store.js';
import {parseEncryptionConfig, type ResourceEncryption} from './config.js';
import {kmsGrpcService} from './kms/api.js';
import {KmsProvider, type KmsTimings} from './kms/provider.js';
import {EncryptingStore, keyResolver} from './store.js';

export interface EncryptionOptions {
  file: string;
  keyPrefix: string;
  /** `--encryption-provider-config-automatic-reload`. */
  reload: boolean;
  /** How often the file is read again when reloading (default 1 s: a cheap read, nearly as prompt as a file watch). */
  reloadIntervalMs?: number;
  kmsTimings?: KmsTimings;
  clock?: Clock;
  log: (message: string) => void;
}

interface Loaded {
  config: ResourceEncryption[];
  kms: KmsProvider[];
}

export class Encryption {
  private current: Loaded;
  private reloader?: ConfigFileReloader<Loaded>;
  /** The checks to register on /healthz, /livez and /readyz. */
  readonly healthChecks: HealthCheck[];

  private constructor(
    private readonly options: EncryptionOptions,
    text: string,
  ) {
    this.current = this.load(text, `--encryption-provider-config ${options.file}`);
    const run = async (providers: KmsProvider[]) => {
      const errors = (await Promise.all(providers.map((p) => p.check()))).filter((e) => e !== undefined);
      if (errors.length) throw new Error(errors.join('; '));
    };
    this.healthChecks = options.reload
      ? [{name: 'kms-providers', check: () => run(this.current.kms)}]
      : this.current.kms.map((p, i) => ({name: `kms-provider-${i}`, check: () => run([p])}));
    if (options.reload) {
      this.reloader = new ConfigFileReloader(options.file, text, 'encryption provider config', (t) => this.loadHealthy(t), (next) => this.swap(next), options.log);
      this.reloader.watch(options.reloadIntervalMs ?? 1000);
    }
  }

  /** Reads and checks the file; a bad one stops the start naming the option and the problem. */
  static async start(options: EncryptionOptions): Promise<Encryption> {
    let text: string;
    try {
      text = await readFile(options.file, 'utf8');
    } catch (error) {
      throw new Error(`--encryption-provider-config: cannot read ${options.file}: ${(error as Error).message}`);
    }
    return new Encryption(options, text);
  }

  /** Wraps an engine so the values of the configured resources are encrypted in it. */
  wrap(engine: Store): Store {
    return new EncryptingStore(engine, () => this.current.config, keyResolver(this.options.keyPrefix));
  }

  /** The file read again now (tests; the reloader polls on its own). */
  reload(): Promise<boolean> {
    return this.reloader?.reload() ?? Promise.resolve(false);
  }

  stop(): void {
    this.reloader?.stop();
    for (const p of this.current.kms) p.stop();
  }

  private load(text: string, source: string): Loaded {
    const kms: KmsProvider[] = [];
    const o = this.options;
    const config = parseEncryptionConfig(text, source, (spec) => {
      const provider = new KmsProvider(spec.name, kmsGrpcService(spec.socketPath, spec.timeoutMs), {clock: o.clock, timings: o.kmsTimings, log: o.log});
      kms.push(provider);
      return provider;
    });
    for (const p of kms) p.start();
    return {config, kms};
  }

  /** A changed file: its KMS plugins must answer before it replaces the running configuration. */
  private async loadHealthy(text: string): Promise<Loaded> {
    const next = this.load(text, `--encryption-provider-config ${this.options.file}`);
    const errors = (await Promise.all(next.kms.map((p) => p.check()))).filter((e) => e !== undefined);
    if (errors.length) {
      for (const p of next.kms) p.stop();
      throw new Error(`the new configuration's KMS providers are not healthy: ${errors.join('; ')}`);
    }
    return next;
  }

  private swap(next: Loaded): void {
    const previous = this.current;
    this.current = next;
    // Reads already decrypting with the old providers finish first.
    const timer = setTimeout(() => previous.kms.forEach((p) => p.stop()), 10_000);
    timer.unref();
  }
}
