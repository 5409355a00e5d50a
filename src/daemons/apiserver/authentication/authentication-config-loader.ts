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
import {ConfigFileReloader} from '../../shared/config-file-reloader.js';

export class ReloadingJwtAuthenticators implements TokenAuthenticator {
  private authenticators: JwtAuthenticator[];
  /** Reads the file again when it changes (`watch`, `stop`, `reload`). */
  readonly reloader: ConfigFileReloader<AuthenticationConfiguration>;

  private constructor(file: string, text: string, readonly initial: AuthenticationConfiguration, log: (message: string) => void, now?: () => Date) {
    const build = (config: AuthenticationConfiguration) => config.jwt.map((c) => new JwtAuthenticator(c, now));
    this.authenticators = build(initial);
    this.reloader = new ConfigFileReloader(file, text, 'authentication config', (t) => parseAuthenticationConfig(t, file), (config) => (this.authenticators = build(config)), log);
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

}
