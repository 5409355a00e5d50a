/**
 * Splits a byte stream into lines for newline-delimited JSON (watch streams, api-conventions §4).
 * Pure: feed it chunks, get back complete lines; a multi-byte character split across chunks is
 * decoded once complete.
 */
export class LineSplitter {
  private buffer = '';
  private readonly decoder = new TextDecoder();

  /** The complete, non-blank lines this chunk finishes. */
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line !== '') lines.push(line);
    }
    return lines;
  }

  /** Whatever followed the last newline, at the end of the stream. */
  flush(): string[] {
    const rest = (this.buffer + this.decoder.decode()).trim();
    this.buffer = '';
    return rest === '' ? [] : [rest];
  }
}
