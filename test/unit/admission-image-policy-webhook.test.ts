import {describe, expect, it} from '@jest/globals';
import {ImagePolicyWebhook, WebhookCallError, goDuration, imageReview, parseImagePolicyConfig, type ImagePolicyConfig} from '../../src/daemons/apiserver/admission/plugins/image-policy-webhook.js';
import {names} from '../../src/api/names.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

describe('ImagePolicyWebhook: configuration', () => {
  it('reads TTLs in seconds and the backoff in milliseconds, with upstream defaults and -1 to turn off', () => {
    expect(parseImagePolicyConfig({imagePolicy: {kubeConfigFile: '/k'}})).toEqual({kubeConfigFile: '/k', retryBackoffMs: 500, allowTtlMs: 300_000, denyTtlMs: 30_000, defaultAllow: false});
    expect(parseImagePolicyConfig({imagePolicy: {kubeConfigFile: '/k', allowTTL: 50, denyTTL: -1, retryBackoff: 100, defaultAllow: true}})).toEqual({kubeConfigFile: '/k', retryBackoffMs: 100, allowTtlMs: 50_000, denyTtlMs: 0, defaultAllow: true});
  });
  it.each([
    [undefined, 'ImagePolicyWebhook: admission.yaml: no config specified'],
    [{}, 'ImagePolicyWebhook: admission.yaml: imagePolicy: must be an object'],
    [{imagePolicy: {}}, 'imagePolicy.kubeConfigFile: a kubeconfig file is required'],
    [{imagePolicy: {kubeConfigFile: '/k', allowTTL: 2400}}, 'imagePolicy.allowTTL (allow cache): valid value is between 1s and 30m0s, got 40m0s'],
    [{imagePolicy: {kubeConfigFile: '/k', retryBackoff: 400000}}, 'imagePolicy.retryBackoff (backoff): valid value is between 1ms and 5m0s, got 6m40s'],
    [{imagePolicy: {kubeConfigFile: '/k', defaultAllow: 'yes'}}, 'imagePolicy.defaultAllow: must be true or false, got "yes"'],
  ])('refuses %j', (config, message) => {
    expect(() => parseImagePolicyConfig(config as JsonObject | undefined, 'admission.yaml')).toThrow(message);
  });
  it('prints durations as Go does', () => {
    expect([1, 500, 1000, 90_000, 1_800_000, 3_600_000].map(goDuration)).toEqual(['1ms', '500ms', '1s', '1m30s', '30m0s', '1h0m0s']);
  });
});

describe('ImagePolicyWebhook: reviews and decisions', () => {
  const config: ImagePolicyConfig = {kubeConfigFile: '/k', allowTtlMs: 60_000, denyTtlMs: 1_000, retryBackoffMs: 100, defaultAllow: false};
  const infix = () => names().podAdmission.imagePolicyAnnotationInfix;

  it('reviews the images of containers and init containers, the image-policy annotations and the namespace', () => {
    const p = pod({initContainers: [{name: 'i', image: 'busybox'}]}, {annotations: {[`mycluster${infix()}ticket`]: '1234', other: 'x'}});
    expect(imageReview(p, 'team', false)).toEqual({
      apiVersion: `${names().podAdmission.imagePolicyGroup}/v1alpha1`, kind: 'ImageReview',
      spec: {containers: [{image: 'nginx'}, {image: 'busybox'}], annotations: {[`mycluster${infix()}ticket`]: '1234'}, namespace: 'team'},
    });
  });

  it('allows, denies with the reason, caches by spec and passes audit annotations on', async () => {
    const asked: JsonObject[] = [];
    const plugin = new ImagePolicyWebhook({config, clock: new FakeClock(), post: async (review) => {
      asked.push(review);
      const images = ((review.spec as JsonObject).containers as JsonObject[]).map((c) => c.image);
      return {kind: 'ImageReview', status: images.includes('evil') ? {allowed: false, reason: 'evil is banned'} : {allowed: true, auditAnnotations: {checked: 'yes'}}};
    }});
    const audit: Record<string, string> = {};
    await plugin.validate(podAttributes('CREATE', pod(), {annotations: audit}));
    await plugin.validate(podAttributes('CREATE', pod()));
    expect(asked).toHaveLength(1);
    expect(audit).toEqual({[`imagepolicywebhook.image-policy.${names().domain}/checked`]: 'yes'});
    await expect(plugin.validate(podAttributes('CREATE', pod({containers: [{name: 'a', image: 'evil'}]})))).rejects.toThrow(
      'pods "web" is forbidden: image policy webhook backend denied one or more images: evil is banned',
    );
  });

  it('retries a failing webhook with back-off, then refuses, or admits with failed-open under defaultAllow', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const post = async () => {
      calls++;
      throw new WebhookCallError('Error contacting webhook: 503', true);
    };
    const closed = new ImagePolicyWebhook({config, clock, post});
    const outcome = closed.validate(podAttributes('CREATE', pod())).catch((e: Error) => e);
    await clock.advance(100 + 150 + 225 + 337.5);
    expect(((await outcome) as Error).message).toBe('pods "web" is forbidden: Error contacting webhook: 503');
    expect(calls).toBe(5);
    const open = new ImagePolicyWebhook({config: {...config, defaultAllow: true}, clock, post: async () => {
      throw new WebhookCallError('Error contacting webhook: 400', false);
    }});
    const p = pod();
    const audit: Record<string, string> = {};
    await open.validate(podAttributes('CREATE', p, {annotations: audit}));
    expect((p.metadata as JsonObject).annotations).toEqual({[names().podAdmission.imagePolicyFailedOpen]: 'true'});
    expect(audit).toEqual({[`imagepolicywebhook.image-policy.${names().domain}/failed-open`]: 'true'});
  });
});
