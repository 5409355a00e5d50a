#!/usr/bin/env node
// orch's entry point. `orch --version` is answered here without loading oclif (a fast start is a
// requirement: it must cost at most 1.6x `node -e 0`); everything else goes through oclif.
const args = process.argv.slice(2);
const versionFlag = args.length === 1 ? /^--version(?:=(.*))?$/.exec(args[0]) : null;
if (versionFlag) {
  const {formatVersion, versionInfo} = await import('../dist/version.js');
  const value = versionFlag[1] ?? 'true';
  if (value === 'raw') console.log(formatVersion('raw'));
  else if (/^v\d+\.\d+\.\d+/.test(value)) console.log(formatVersion('print', versionInfo(value)));
  else if (value === 'true') console.log(formatVersion('print'));
  else {
    console.error(`error: invalid value "${value}" for --version: expected --version, --version=raw or --version=vX.Y.Z`);
    process.exitCode = 1;
  }
} else if (args[0] === 'patch' && !args.some((a) => a === '--help' || a === '-h')) {
  // The fast entry: the same parser and code as the oclif command, minus oclif's start-up.
  const {main} = await import('../dist/fast/patch.js');
  await main(args.slice(1));
} else {
  const {run} = await import('../dist/main.js');
  await run();
}
