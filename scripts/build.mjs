// Builds dist/ with esbuild (one bundle per command, shared chunks split out, so a command loads only
// what it imports), then regenerates oclif.manifest.json so oclif never scans or loads commands to
// answer --help or find a command.
import {build} from 'esbuild';
import {readdirSync, readFileSync, rmSync} from 'node:fs';
import {execFileSync} from 'node:child_process';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const commands = readdirSync('src/commands').filter((f) => /\.tsx?$/.test(f));

rmSync('dist', {recursive: true, force: true});
await build({
  entryPoints: {
    main: 'src/main.ts',
    version: 'src/lib/version.ts',
    'fast/patch': 'src/fast/patch.ts',
    ...Object.fromEntries(commands.map((f) => [`commands/${f.replace(/\.tsx?$/, '')}`, `src/commands/${f}`])),
  },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['better-sqlite3', 'typescript', 'react-devtools-core'],
  define: {__ORCH_VERSION__: JSON.stringify(pkg.version)},
  // Bundled CommonJS dependencies call require(); give ESM output a real one.
  banner: {js: "import {createRequire as __orchCreateRequire} from 'node:module'; const require = __orchCreateRequire(import.meta.url);"},
  jsx: 'automatic',
  logLevel: 'warning',
});
execFileSync('npx', ['oclif', 'manifest'], {stdio: ['ignore', 'ignore', 'inherit']});
