/**
 * Puts a pod's volumes on disk before its containers start, and keeps the token volumes fresh.
 *
 * Processes of the process runtime share the host's filesystem: there is no mount namespace to put
 * a volume at its `mountPath`. The agent instead lays each pod out under its own root,
 * `<rootDir>/pods/<uid>/root`, where every container's volume mount is a symlink at its mountPath
 * into `<rootDir>/pods/<uid>/volumes/<volume>`, and gives the containers that root in the
 * `<PRODUCT>_POD_ROOT` variable (names.ts): a process reads its token at
 * `$ORCH_POD_ROOT/var/run/secrets/orch.io/serviceaccount/token` (client libraries take such a
 * prefix: client-node's `loadFromCluster(root)`, Python's InClusterConfigLoader(token_filename, cert_filename)).
 *
 * Files are written as upstream's atomic writer promises: a reader sees the old or the new file,
 * never a partial one (each file goes to a temporary name in the same directory, then renames).
 */
import fs from 'node:fs';
import path from 'node:path';
import {names} from '../../../api/names.js';
import type {Clock, TimerHandle} from '../../shared/clock.js';
import type {Logger} from '../../../lib/klog.js';
import type {Pod} from '../runtime/types.js';
import {hasToken, VolumeError, volumeFiles, type VolumeFile, type VolumeSources} from './projection.js';
import type {ServiceAccountTokens} from './service-account-tokens.js';

export interface VolumeManagerOptions {
  /** Config maps, secrets and the node IP; tokens come from `tokens`. */
  sources: Omit<VolumeSources, 'token'>;
  /** Absent without an API server (standalone): a pod that needs a token cannot start. */
  tokens?: ServiceAccountTokens;
  clock: Clock;
  /** How often token volumes are checked for a token to refresh (the kubelet's sync period: 1 min). */
  resyncMs?: number;
  logger?: Pick<Logger, 'warning'>;
}

interface MountedPod {
  pod: Pod;
  podDir: string;
}

export class VolumeManager {
  private readonly pods = new Map<string, MountedPod>();
  private timer?: TimerHandle;
  private stopped = false;

  constructor(private readonly options: VolumeManagerOptions) {}

  /** The directory below which a pod's volume mounts appear at their mountPaths. */
  static podRoot(podDir: string): string {
    return path.join(podDir, 'root');
  }

  /**
   * Writes every volume of the pod and links the containers' mounts; answers the variables every
   * container of the pod gets. Throws VolumeError when a volume cannot be set up yet.
   */
  async setUp(pod: Pod, podDir: string): Promise<Record<string, string>> {
    const uid = pod.metadata.uid ?? '';
    await this.writeVolumes(pod, podDir, () => true);
    this.linkMounts(pod, podDir);
    this.pods.set(uid, {pod, podDir});
    this.schedule();
    return {[names().podRootEnv]: VolumeManager.podRoot(podDir)};
  }

  /** Forgets a pod (its directory is removed with the pod's). */
  tearDown(uid: string): void {
    this.pods.delete(uid);
    this.options.tokens?.forgetPod(uid);
  }

  /** Rewrites the token volumes whose token must be refreshed; the resync timer calls it. */
  async refreshTokens(): Promise<void> {
    for (const [uid, {pod, podDir}] of this.pods) {
      if (!this.options.tokens?.podNeedsRefresh(uid)) continue;
      try {
        await this.writeVolumes(pod, podDir, hasToken);
      } catch (error) {
        // The old token stays until it expires; the next resync tries again.
        this.options.logger?.warning('Could not refresh a service account token', 'pod', `${pod.metadata.namespace}/${pod.metadata.name}`, 'err', (error as Error).message);
      }
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.stopped || !this.options.tokens) return;
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      void this.refreshTokens().finally(() => {
        if (this.pods.size > 0) this.schedule();
      });
    }, this.options.resyncMs ?? 60_000);
  }

  private async writeVolumes(pod: Pod, podDir: string, which: (v: NonNullable<Pod['spec']['volumes']>[number]) => boolean): Promise<void> {
    const sources: VolumeSources = {...this.options.sources, token: (p, audience, seconds) => this.token(p, audience, seconds)};
    for (const volume of pod.spec.volumes ?? []) {
      if (!which(volume)) continue;
      const files = await volumeFiles(pod, volume, sources);
      writeAtomically(path.join(podDir, 'volumes', volume.name), files);
    }
  }

  private async token(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string> {
    const tokens = this.options.tokens;
    if (!tokens) throw new VolumeError('service account tokens need an API server (the agent runs standalone)');
    const issued = await tokens.get({
      namespace: pod.metadata.namespace ?? 'default',
      serviceAccount: pod.spec.serviceAccountName || 'default',
      audiences: audience ? [audience] : [],
      expirationSeconds,
      pod: {name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? ''},
    });
    return issued.token;
  }

  private linkMounts(pod: Pod, podDir: string): void {
    const volumes = new Set((pod.spec.volumes ?? []).map((v) => v.name));
    const root = VolumeManager.podRoot(podDir);
    for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
      for (const mount of container.volumeMounts ?? []) {
        if (!volumes.has(mount.name)) throw new VolumeError(`container "${container.name}": volume mount "${mount.name}" names no volume of the pod`);
        if (!mount.mountPath.startsWith('/') || mount.mountPath.split('/').includes('..')) {
          throw new VolumeError(`container "${container.name}": mountPath ${JSON.stringify(mount.mountPath)} must be absolute without '..'`);
        }
        const target = path.join(podDir, 'volumes', mount.name, mount.subPath ?? '');
        fs.mkdirSync(target, {recursive: true});
        const link = path.join(root, mount.mountPath);
        fs.mkdirSync(path.dirname(link), {recursive: true});
        fs.rmSync(link, {force: true, recursive: false});
        fs.symlinkSync(target, link);
      }
    }
  }
}

function writeAtomically(dir: string, files: VolumeFile[]): void {
  fs.mkdirSync(dir, {recursive: true});
  for (const file of files) {
    const final = path.join(dir, file.path);
    fs.mkdirSync(path.dirname(final), {recursive: true});
    const temporary = path.join(path.dirname(final), `.${path.basename(final)}.tmp`);
    fs.writeFileSync(temporary, file.content, {mode: file.mode});
    fs.chmodSync(temporary, file.mode);
    fs.renameSync(temporary, final);
  }
}
