/**
 * POST /run/<namespace>/<pod>/<container>?cmd=...: the kubelet's run handler. The command (split
 * on white space, as upstream's strings.Fields) runs once in the container's context and its
 * output, stdout and stderr together, is the response body; a non-zero exit is a 500 with the
 * output and the exit code, as upstream's RunInContainer error.
 */
import type {ServerResponse} from 'node:http';
import {writeText} from '../server/responses.js';
import type {StreamingProviders} from './server.js';

const MAX_OUTPUT = 16 * 1024 * 1024;

export async function runCommand(
  providers: StreamingProviders | undefined,
  route: {namespace: string; pod: string; container: string},
  query: URLSearchParams,
  res: ServerResponse,
): Promise<void> {
  const command = (query.get('cmd') ?? '').split(/\s+/).filter(Boolean);
  if (command.length === 0) return writeText(res, 400, 'you must specify a command (cmd)');
  const pod = providers?.pod(route.namespace, route.pod);
  if (!providers || !pod || 'error' in pod) return writeText(res, 404, 'pod does not exist');
  const proc = providers.exec(route.namespace, route.pod, route.container, {command, tty: false, stdin: false});
  if ('error' in proc) return writeText(res, 500, proc.error);
  const chunks: Buffer[] = [];
  let size = 0;
  const collect = (chunk: Buffer) => {
    if (size < MAX_OUTPUT) chunks.push(chunk);
    size += chunk.length;
  };
  proc.stdout.on('data', collect);
  proc.stderr?.on('data', collect);
  res.once('close', () => proc.kill());
  const ended = (stream: NodeJS.ReadableStream | null) => new Promise<void>((resolve) => (stream ? stream.once('close', () => resolve()) : resolve()));
  const [exit] = await Promise.all([proc.exited, ended(proc.stdout), ended(proc.stderr)]);
  const output = Buffer.concat(chunks);
  if (exit.startError) return writeText(res, 500, exit.startError);
  if (exit.exitCode !== 0) return writeText(res, 500, `command '${command.join(' ')}' exited with ${exit.exitCode}: ${output.toString()}`);
  res.writeHead(200, {'Content-Type': 'text/plain; charset=utf-8'});
  res.end(output);
}
