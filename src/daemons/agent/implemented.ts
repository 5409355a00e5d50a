/** The agent options that take effect (the option table marks exactly these implemented; a test keeps them in step). */
export const IMPLEMENTED_AGENT_OPTIONS = [
  // --names is read by the command (src/lib/select-names.ts) before the agent is built.
  'names',
  'config', 'config-dir', 'print-config', 'orchconfig', 'hostname-override', 'root-dir', 'pod-manifest-path',
  'file-check-frequency', 'manifest-url', 'manifest-url-header', 'http-check-frequency', 'runonce', 'lock-file',
  'exit-on-lock-contention', 'fail-swap-on', 'fail-cgroupv1', 'protect-kernel-defaults', 'register-node',
  'register-with-taints', 'node-labels', 'node-ip', 'provider-id', 'node-status-update-frequency', 'orch-api-qps',
  'orch-api-burst', 'event-qps', 'event-burst', 'max-pods', 'pods-per-core', 'orch-reserved', 'system-reserved',
  'experimental-allocatable-ignore-eviction', 'eviction-hard', 'eviction-soft', 'eviction-soft-grace-period',
  'eviction-minimum-reclaim', 'eviction-max-pod-grace-period', 'eviction-pressure-transition-period',
  'container-log-max-size', 'container-log-max-files', 'container-runtime-endpoint', 'address', 'port',
  'read-only-port', 'healthz-bind-address', 'healthz-port', 'enable-server', 'enable-debugging-handlers',
  'tls-cert-file', 'tls-private-key-file', 'tls-cipher-suites', 'tls-min-version', 'cert-dir', 'anonymous-auth',
  'client-ca-file', 'authorization-mode', 'local-storage-capacity-isolation',
  'authentication-token-webhook', 'authentication-token-webhook-cache-ttl',
  'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl', 'streaming-connection-idle-timeout',
  'v', 'vmodule', 'logging-format', 'log-flush-frequency', 'version', 'help',
] as const;
