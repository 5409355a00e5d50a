/**
 * Options of `orch patch`, declared as data from seed 3 ("Node agent and patch command"): the
 * "Patch options", "Global client options" and "Client, credentials and identity" tables, plus the
 * orch additions at the end.
 *
 * Everything that works on local files (`--local -f FILE`) and on the API server (TYPE NAME, the
 * orchconfig and connection flags) is implemented; the options still marked `implemented: false`
 * (proxy, compression, profiling, the storage driver...) are parsed and validated, and setting one
 * prints a warning.
 */
import type { OptionTable } from './spec.js';

const PATCH = 'Patch options';
const GLOBAL = 'Global client options';
const CLIENT = 'Client, credentials and identity';

/**
 * Output formats of -o. The template formats also come as `format=TEMPLATE`
 * (`-o jsonpath={.metadata.name}`), so an enum check must look at the part before the first `=`.
 */
export const outputFormats = [
  'json', 'yaml', 'kyaml', 'name', 'go-template', 'go-template-file', 'template', 'templatefile',
  'jsonpath', 'jsonpath-as-json', 'jsonpath-file',
] as const;

export const patchOptions: OptionTable = [
  // ---- Patch options ----
  {
    name: 'patch', short: 'p', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Patch to apply, written in JSON or YAML.',
    section: PATCH, implemented: true,
  },
  {
    name: 'patch-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Read the patch from this file instead of -p.',
    section: PATCH, implemented: true,
  },
  {
    name: 'type', type: 'string', enum: ['json', 'merge', 'strategic'], seedType: 'string',
    seedDefault: 'strategic', default: 'strategic',
    help: 'Patch kind: strategic merge, JSON merge (RFC 7386) or JSON patch (RFC 6902).',
    section: PATCH, implemented: true,
  },
  {
    name: 'filename', short: 'f', type: 'strings', seedType: 'strings', seedDefault: 'none',
    help: 'File, directory or URL naming the object to patch; may be repeated.',
    section: PATCH, implemented: true, repeatable: true,
  },
  {
    name: 'kustomize', short: 'k', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Kustomization directory naming the object; not together with -f or -R.',
    section: PATCH, implemented: true,
  },
  {
    name: 'recursive', short: 'R', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Also read the files in subdirectories of the -f directories.',
    section: PATCH, implemented: true,
  },
  {
    name: 'local', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Patch the object read from the file and print it; the server is not contacted.',
    section: PATCH, implemented: true,
  },
  {
    name: 'subresource', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Patch a subresource of the object, such as status or scale.',
    section: PATCH, implemented: true,
  },
  {
    // `none` is the mode that persists, so it is also the effective default; a bare --dry-run means
    // "unchanged", which the dryRun parser resolves.
    name: 'dry-run', type: 'dryRun', seedType: 'string[=unchanged]', seedDefault: 'none', default: 'none',
    help: 'Preview only: client prints the object that would be sent, server checks it without saving.',
    section: PATCH, implemented: true,
  },
  {
    name: 'field-manager', type: 'string', seedType: 'string',
    seedDefault: 'orch-patch style manager name (`<client>-patch`)', default: 'orch-patch',
    help: 'Manager name recorded as owner of the fields this patch sets.',
    section: PATCH, implemented: true,
  },
  {
    name: 'output', short: 'o', type: 'string',
    // No enum here: `jsonpath=...` and `go-template=...` carry a template after '='; the printer
    // resolver (src/printers) checks the format and gives kubectl's error for an unknown one.
    seedType: 'string', seedDefault: 'none',
    help: 'Print the patched object in this format (json, yaml, name, jsonpath=..., go-template=...).',
    section: PATCH, implemented: true,
  },
  {
    name: 'template', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Template text, or template file, for the go-template and jsonpath outputs.',
    section: PATCH, implemented: true,
  },
  {
    name: 'allow-missing-template-keys', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Print nothing instead of failing when a template names a missing field.',
    section: PATCH, implemented: true,
  },
  {
    name: 'show-managed-fields', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Keep metadata.managedFields in JSON and YAML output.',
    section: PATCH, implemented: true,
  },
  {
    name: 'warnings-as-errors', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Exit non-zero when the server sends warnings.',
    section: PATCH, implemented: true,
  },

  // ---- Global client options ----
  {
    name: 'server', short: 's', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'API server address and port, overriding the orchconfig.',
    section: GLOBAL, implemented: true,
  },
  {
    name: 'namespace', short: 'n', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Namespace of the object, overriding the context\'s namespace.',
    section: GLOBAL, implemented: true,
  },
  {
    // A string, as the seed says: kubectl reads a bare integer as seconds (`5` = 5s) and anything
    // else as a Go duration, which src/client/request-timeout.ts checks when the server is contacted.
    name: 'request-timeout', type: 'string', seedType: 'string', seedDefault: '0', default: '0',
    help: 'Give up on a single request after this long, such as 30s; 0 waits forever.',
    section: GLOBAL, implemented: true,
  },
  {
    name: 'disable-compression', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Ask the server not to compress responses.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'proxy-url', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Proxy to send API server requests through.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'match-server-version', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Fail unless the server runs the same version as this client.',
    section: GLOBAL, implemented: false,
  },
  {
    // Kept literal: $HOME is expanded when the option is used.
    name: 'cache-dir', type: 'string', seedType: 'string', seedDefault: '$HOME/.orch/cache', default: '$HOME/.orch/cache',
    help: 'Directory for cached discovery information.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'profile', type: 'string',
    enum: ['none', 'cpu', 'heap', 'goroutine', 'threadcreate', 'block', 'mutex', 'trace'],
    seedType: 'string', seedDefault: 'none', default: 'none',
    help: 'Profile to record while the command runs.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'profile-output', type: 'string', seedType: 'string', seedDefault: 'profile.pprof', default: 'profile.pprof',
    help: 'File the --profile data is written to.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'storage-driver-buffer-duration', type: 'duration', seedType: 'duration', seedDefault: '1m0s', default: '1m0s',
    help: 'How long storage driver writes are buffered before one transaction.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'storage-driver-db', type: 'string', seedType: 'string', seedDefault: 'cadvisor', default: 'cadvisor',
    help: 'Database name of the storage driver.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'storage-driver-host', type: 'string', seedType: 'string', seedDefault: 'localhost:8086', default: 'localhost:8086',
    help: 'Database host:port of the storage driver.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'storage-driver-user', type: 'string', seedType: 'string', seedDefault: 'root', default: 'root',
    help: 'Database user of the storage driver.',
    section: GLOBAL, implemented: false,
  },
  {
    // The seed shows a placeholder, not a value, so there is no default to declare.
    name: 'storage-driver-password', type: 'string', seedType: 'string', seedDefault: '<DEFAULT_PASSWORD>',
    help: 'Database password of the storage driver.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'storage-driver-secure', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Use a secure connection to the storage driver database.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'storage-driver-table', type: 'string', seedType: 'string', seedDefault: 'stats', default: 'stats',
    help: 'Table name of the storage driver.',
    section: GLOBAL, implemented: false,
  },
  {
    name: 'version', type: 'version', seedType: 'version[=true]', seedDefault: 'none',
    help: 'Print the version and exit.',
    section: GLOBAL, implemented: true,
  },

  // ---- Client, credentials and identity ----
  {
    name: 'orchconfig', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Orchconfig file to use instead of $ORCHCONFIG or ~/.orch/config.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'orchrc', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Preferences file (aliases and default flags) to load.',
    section: CLIENT, implemented: false,
  },
  {
    name: 'cluster', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Cluster entry of the orchconfig to use.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'context', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Context entry of the orchconfig to use.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'user', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'User entry of the orchconfig to use.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'username', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'User name for basic authentication.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'password', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Password for basic authentication.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'token', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Bearer token sent to the API server.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'certificate-authority', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA certificate file that the server certificate must chain to.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'client-certificate', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client certificate file for TLS authentication.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'client-key', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Private key file of --client-certificate.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'tls-server-name', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Server name expected in the server certificate, when not the host contacted.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'insecure-skip-tls-verify', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Accept any server certificate (insecure).',
    section: CLIENT, implemented: true,
  },
  {
    name: 'as', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'User or service account to impersonate.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'as-group', type: 'strings', seedType: 'strings', seedDefault: 'none',
    help: 'Group to impersonate; repeat for several.',
    section: CLIENT, implemented: true, repeatable: true,
  },
  {
    name: 'as-uid', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'UID to impersonate.',
    section: CLIENT, implemented: true,
  },
  {
    name: 'as-user-extra', type: 'strings', seedType: 'strings', seedDefault: 'none',
    help: 'Extra user attribute to impersonate, as key=value; repeat per value.',
    section: CLIENT, implemented: true, repeatable: true,
  },

  // ---- orch additions ----
  {
    name: 'diff', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Also print a unified diff of the object before and after the patch.',
    section: 'orch', implemented: true, orchOnly: true,
  },
  {
    name: 'interactive', short: 'i', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Show the diff and ask for confirmation before applying.',
    section: 'orch', implemented: true, orchOnly: true,
  },
];
