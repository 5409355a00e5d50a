/**
 * Where objects come from: `-f` files, directories (optionally recursive), http(s) URLs and `-`
 * (standard input), as kubectl's resource builder reads them. Directories contribute only
 * .json, .yaml and .yml files, in lexical order.
 */
import {readFile, readdir, stat} from 'node:fs/promises';
import {join} from 'node:path';

export interface Source {
  /** What the user named, for messages. */
  name: string;
  text: string;
}

export class SourceError extends Error {}

const MANIFEST_EXTENSIONS = /\.(json|ya?ml)$/i;

export interface SourceIO {
  readStdin(): Promise<string>;
  fetchUrl(url: string): Promise<string>;
}

export const defaultSourceIO: SourceIO = {
  async readStdin() {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  async fetchUrl(url) {
    let response: Response;
    try {
      response = await fetch(url, {signal: AbortSignal.timeout(30_000)});
    } catch (error) {
      throw new SourceError(`unable to read URL "${url}": ${(error as Error).message}`);
    }
    if (!response.ok) {
      throw new SourceError(`unable to read URL "${url}", server reported ${response.status} ${response.statusText}, status code=${response.status}`);
    }
    return response.text();
  },
};

export async function readSources(filenames: readonly string[], recursive: boolean, io = defaultSourceIO): Promise<Source[]> {
  const sources: Source[] = [];
  for (const name of filenames) {
    if (name === '-') {
      sources.push({name: 'STDIN', text: await io.readStdin()});
    } else if (/^https?:\/\//i.test(name)) {
      sources.push({name, text: await io.fetchUrl(name)});
    } else {
      sources.push(...(await readPath(name, recursive)));
    }
  }
  return sources;
}

async function readPath(path: string, recursive: boolean): Promise<Source[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new SourceError(`the path "${path}" does not exist`);
  }
  if (!info.isDirectory()) {
    try {
      return [{name: path, text: await readFile(path, 'utf8')}];
    } catch (error) {
      throw new SourceError(`unable to read "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  const entries = (await readdir(path, {withFileTypes: true})).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sources: Source[] = [];
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) {
      if (recursive) sources.push(...(await readPath(child, true)));
    } else if (MANIFEST_EXTENSIONS.test(entry.name)) {
      sources.push({name: child, text: await readFile(child, 'utf8')});
    }
  }
  return sources;
}
