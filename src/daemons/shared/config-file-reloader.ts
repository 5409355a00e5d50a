/**
 * A configuration file read again while a daemon runs (upstream's automatic reload of
 * `--authorization-config` and `--authentication-config`): a cheap read every interval; a changed,
 * valid file is handed to `apply`, a broken one is logged and the running configuration kept.
 */
import {readFile} from 'node:fs/promises';

export class ConfigFileReloader<T> {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly file: string,
    private lastText: string,
    /** What the file configures, for the log lines (`authorization config`). */
    private readonly what: string,
    /** Parses and builds from the text; throws on a broken file. */
    private readonly load: (text: string) => Promise<T> | T,
    private readonly apply: (value: T) => void,
    private readonly log: (message: string) => void,
  ) {}

  /** Reads the file again; true when a new configuration took over. */
  async reload(): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      this.log(`${this.what} reload failed: cannot read ${this.file}: ${(error as Error).message}`);
      return false;
    }
    if (text === this.lastText) return false;
    this.lastText = text;
    try {
      this.apply(await this.load(text));
      this.log(`${this.what} reloaded from ${this.file}`);
      return true;
    } catch (error) {
      this.log(`${this.what} reload failed, keeping the running configuration: ${(error as Error).message}`);
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
