/**
 * The version orch reports. Kept free of imports so `orch --version` loads nothing else.
 * ORCH_VERSION is replaced at build time by esbuild's `define` with package.json's version.
 */
declare const __ORCH_VERSION__: string | undefined;

export const ORCH_VERSION: string = typeof __ORCH_VERSION__ === 'string' ? __ORCH_VERSION__ : '0.0.0-dev';

/**
 * The upstream release whose API orch emulates: the one the seeds describe. Their admission plugin
 * list has PodGroupProtection and PodResizeValidator (new in Kubernetes 1.36) and neither
 * PodGroupWorkloadExists (removed again in 1.36) nor JobValidation (1.37), so: 1.36.
 */
export const EMULATED_KUBERNETES = {major: 1, minor: 36} as const;

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  platform: string;
  nodeVersion: string;
  /** Set by the seed's `--version=vX.Y.Z`: the servers then report exactly that. */
  overridden?: boolean;
}

/** orch's own version (or the one `--version=vX.Y.Z` sets). */
export function versionInfo(gitVersion?: string): VersionInfo {
  const text = gitVersion ?? `v${ORCH_VERSION}`;
  const [major = '0', minor = '0'] = text.replace(/^v/, '').split('.');
  return {major, minor, gitVersion: text, platform: `${process.platform}/${process.arch}`, nodeVersion: process.version, ...(gitVersion !== undefined ? {overridden: true} : {})};
}

export interface ReportedVersion {
  major: string;
  minor: string;
  gitVersion: string;
  emulationMajor: string;
  emulationMinor: string;
  minCompatibilityMajor: string;
  minCompatibilityMinor: string;
}

/**
 * What the servers report (`/version`, a node's kubeletVersion): upstream's major and minor, so
 * clients see the release whose API they talk to and no version skew, with orch's own version as
 * semver build metadata (`v1.36.0+orch.0.1.0`). A version set with `--version=vX.Y.Z` is reported
 * as given.
 */
export function reportedVersion(info: VersionInfo, effective?: {emulation: {major: number; minor: number}; minCompatibility: {major: number; minor: number}}): ReportedVersion {
  const {major, minor} = info.overridden ? {major: info.major, minor: info.minor} : {major: String(EMULATED_KUBERNETES.major), minor: String(EMULATED_KUBERNETES.minor)};
  const gitVersion = info.overridden ? info.gitVersion : `v${major}.${minor}.0+orch.${info.gitVersion.replace(/^v/, '')}`;
  // --emulated-version and --min-compatibility-version show here, as upstream's /version does.
  if (effective) {
    const {emulation: e, minCompatibility: m} = effective;
    return {major, minor, gitVersion, emulationMajor: String(e.major), emulationMinor: String(e.minor), minCompatibilityMajor: String(m.major), minCompatibilityMinor: String(m.minor)};
  }
  const previous = String(Math.max(0, Number(minor) - 1));
  return {major, minor, gitVersion, emulationMajor: major, emulationMinor: minor, minCompatibilityMajor: major, minCompatibilityMinor: Number.isNaN(Number(minor)) ? minor : previous};
}

/** `--version` prints `orch v0.1.0`; `--version=raw` prints the whole record, as upstream's daemons do. */
export function formatVersion(mode: 'print' | 'raw', info: VersionInfo = versionInfo()): string {
  if (mode === 'print') return `orch ${info.gitVersion}`;
  return (
    `version.Info{Major:"${info.major}", Minor:"${info.minor}", GitVersion:"${info.gitVersion}", ` +
    `Platform:"${info.platform}", NodeVersion:"${info.nodeVersion}"}`
  );
}
