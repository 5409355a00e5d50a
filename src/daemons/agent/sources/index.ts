/** The agent's pod sources: files, a URL and the API server merged into pod updates; mirror pods. */
export * from './types.js';
export { applyStaticDefaults, canonicalJson, fnv1a128Hex, staticPodName, staticPodUid, type StaticOrigin } from './static-defaults.js';
export { decodeManifestFile, decodeManifestUrlBody, ManifestError, MAX_MANIFEST_BYTES, staticPodReferenceProblem, validateStaticPod } from './decode.js';
export { checkAndUpdatePod, PodConfig, podsDifferSemantically, type PodConfigOptions } from './pod-config.js';
export { FileSource, manifestNames, type FileSourceOptions } from './file-source.js';
export { HttpSource, type HttpSourceOptions } from './http-source.js';
export { ApiSource, nodePodsRef, splitMirrorPods, type ApiSourceOptions } from './api-source.js';
export { MirrorClient, MirrorError, mirrorPodOf, type MirrorPodClient, type MirrorRestClient } from './mirror-client.js';
export { isMirrorPodOf, planMirrorPods, type MirrorAction } from './mirror-plan.js';
export { MirrorPodManager, type MirrorPodManagerOptions } from './mirror-manager.js';
export { PodSources, type PodSourcesOptions } from './pod-sources.js';
