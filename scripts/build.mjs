// Builds dist/ with esbuild (one bundle per command, shared chunks split out, so a command loads only
// what it imports), then regenerates oclif.manifest.json so oclif never scans or loads commands to
// answer --help or find a command.
import {build} from 'esbuild';
import {copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync} from 'node:fs';
import {execFileSync} from 'node:child_process';
import {writeLineTables} from './line-tables.mjs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const commands = readdirSync('src/commands').filter((f) => /\.tsx?$/.test(f));

rmSync('dist', {recursive: true, force: true});
const shared = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // Native modules and packages that read files next to their own code (etcd3's .proto files) stay in node_modules.
  external: ['better-sqlite3', 'etcd3', 'typescript', 'react-devtools-core', 'node-pty', 'ws', 'node-unix-socket-linux-x64-gnu', 'node-unix-socket-linux-x64-musl'],
  define: {__ORCH_VERSION__: JSON.stringify(pkg.version)},
  // Bundled CommonJS dependencies call require(); give ESM output a real one.
  banner: {js: "import {createRequire as __orchCreateRequire} from 'node:module'; const require = __orchCreateRequire(import.meta.url);"},
  jsx: 'automatic',
  logLevel: 'warning',
  // Source maps beside each file, without the sources: the line tables klog reads are made from them
  // (./line-tables.mjs), and `node --enable-source-maps` maps stack traces with them.
  sourcemap: 'linked',
  sourcesContent: false,
};
await build({
  ...shared,
  entryPoints: {
    main: 'src/main.ts',
    version: 'src/lib/version.ts',
    ...Object.fromEntries(commands.map((f) => [`commands/${f.replace(/\.tsx?$/, '')}`, `src/commands/${f}`])),
  },
  outdir: 'dist',
});
// The fast entry of `orch patch` is built on its own: it needs oclif's parser but never oclif's help
// rendering or its error handler (it reports errors itself), so those two modules, which pull in
// the help templates and their dependencies, are replaced by stubs that fail loudly if ever called.
const stubOclifHelp = {
  name: 'stub-oclif-help',
  setup(b) {
    b.onResolve({filter: /^(\.\.\/help\/index|\.\/help|\.\/handle)$/}, (args) => {
      if (!args.importer.includes('@oclif/core/lib/')) return undefined;
      if (args.path === './help' && !args.importer.endsWith('lib/flags.js')) return undefined;
      return {path: args.path, namespace: 'oclif-stub'};
    });
    b.onLoad({filter: /.*/, namespace: 'oclif-stub'}, () => ({
      contents: `const fail = () => { throw new Error('oclif help is not loaded in the fast entry'); };
        module.exports = { handle: fail, loadHelpClass: fail, Help: fail };`,
      loader: 'js',
    }));
  },
};
await build({
  ...shared,
  entryPoints: {patch: 'src/fast/patch.ts'},
  outdir: 'dist/fast',
  plugins: [stubOclifHelp],
});
// Data files read at run time beside the bundle (src/api/schema/definitions.ts looks in dist/data/).
mkdirSync('dist/data', {recursive: true});
copyFileSync('src/api/schema/data/definitions.json.gz', 'dist/data/definitions.json.gz');
writeLineTables('dist');
execFileSync('npx', ['oclif', 'manifest'], {stdio: ['ignore', 'ignore', 'inherit']});
