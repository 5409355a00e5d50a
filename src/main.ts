/** The oclif entry: everything except the `orch --version` fast path in bin/run.js comes through here. */
import {execute} from '@oclif/core';

export async function run(): Promise<void> {
  await execute({dir: import.meta.url});
}
