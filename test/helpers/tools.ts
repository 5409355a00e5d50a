/**
 * Programs some tests need from Debian packages (scripts/test-debian-packages.txt, which
 * ./scripts/test.sh installs). A test that needs one and cannot find it fails with a message naming
 * the package, rather than passing by skipping.
 */
import {spawnSync} from 'node:child_process';

/** Throws, naming the Debian package to install, when `command` does not run. */
export function requireTool(command: string, debianPackage: string, versionArgs: readonly string[] = ['-V']): void {
  const r = spawnSync(command, versionArgs, {stdio: 'ignore'});
  if (r.error || r.status !== 0) {
    throw new Error(`${command} is not installed: this test needs it (apt-get install ${debianPackage}, or run ./scripts/test.sh, which installs it)`);
  }
}
