/**
 * The version orch reports. Kept free of imports so `orch --version` loads nothing else.
 * ORCH_VERSION is replaced at build time by esbuild's `define` with package.json's version.
 */
declare const __ORCH_VERSION__: string | undefined;

export const ORCH_VERSION: string = typeof __ORCH_VERSION__ === 'string' ? __ORCH_VERSION__ : '0.0.0-dev';

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  platform: string;
  nodeVersion: string;
}

export function versionInfo(gitVersion = `v${ORCH_VERSION}`): VersionInfo {
  const [major = '0', minor = '0'] = gitVersion.replace(/^v/, '').split('.');
  return {major, minor, gitVersion, platform: `${process.platform}/${process.arch}`, nodeVersion: process.version};
}

/** `--version` prints `orch v0.1.0`; `--version=raw` prints the whole record, as upstream's daemons do. */
export function formatVersion(mode: 'print' | 'raw', info: VersionInfo = versionInfo()): string {
  if (mode === 'print') return `orch ${info.gitVersion}`;
  return (
    `version.Info{Major:"${info.major}", Minor:"${info.minor}", GitVersion:"${info.gitVersion}", ` +
    `Platform:"${info.platform}", NodeVersion:"${info.nodeVersion}"}`
  );
}
