/**
 * `--authentication-config` at run time: the JWT authenticators of the file, reloaded when the file
 * changes (a cheap read every interval, as upstream re-reads its file); a valid new configuration
 * replaces the authenticators at once, an invalid one is logged and the running ones kept. The
 * anonymous section is read at start only (a change needs a restart).
 */
import {readFile} from 'node:fs/promises';
import type {TokenAuthenticator, TokenResult} from '../../shared/authentication/token-authenticator.js';
import {parseAuthenticationConfig, type AuthenticationConfiguration} from './authentication-config.js';
import {JwtAuthenticator} from './jwt-authenticator.js';

export class ReloadingJwtAuthenticators implements TokenAuthenticator {
  private authenticators: JwtAuthenticator[];
  private lastText: string;
  private timer?: NodeJS.Timeout;

  private constructor(
    private readonly file: string,
    text: string,
    readonly initial: AuthenticationConfiguration,
    private readonly log: (message: string) => void,
    private readonly now?: () => Date,
  ) {
    this.lastText = text;
    this.authenticators = initial.jwt.map((c) => new JwtAuthenticator(c, now));
  }

  static async load(file: string, log: (message: string) => void, now?: () => Date): Promise<ReloadingJwtAuthenticators> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new Error(`--authentication-config: cannot read ${file}: ${(error as Error).message}`);
    }
    return new ReloadingJwtAuthenticators(file, text, parseAuthenticationConfig(text, file), log, now);
  }

  /** The issuers served now. */
  get issuers(): string[] {
    return this.authenticators.map((a) => a.issuer);
  }

  async authenticateToken(token: string): Promise<TokenResult | undefined> {
    // Each token goes to the one authenticator of its issuer (the others answer undefined at once).
    for (const authenticator of this.authenticators) {
      const result = await authenticator.authenticateToken(token);
      if (result) return result;
    }
    return undefined;
  }

  /** Reads the file again; true when new authenticators took over. */
  async reload(): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      this.log(`authentication config reload failed: cannot read ${this.file}: ${(error as Error).message}`);
      return false;
    }
    if (text === this.lastText) return false;
    this.lastText = text;
    try {
      const config = parseAuthenticationConfig(text, this.file);
      this.authenticators = config.jwt.map((c) => new JwtAuthenticator(c, this.now));
      this.log(`authentication config reloaded from ${this.file}`);
      return true;
    } catch (error) {
      this.log(`authentication config reload failed, keeping the running configuration: ${(error as Error).message}`);
      return false;
    }
  }

  watch(intervalMs: number): void {
    this.timer = setInterval(() => void this.reload(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
