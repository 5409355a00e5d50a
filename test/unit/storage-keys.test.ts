import {describe, expect, it} from '@jest/globals';
import {resourceKeyPrefix} from '../../src/daemons/apiserver/storage-keys.js';
import {builtinResources} from '../../src/api/resources.js';

describe('resourceKeyPrefix: overrides and the watch cache route by where the REST layer writes', () => {
  it('uses each built-in resource\'s storage prefix', () => {
    for (const r of builtinResources()) {
      expect(resourceKeyPrefix('/registry', r.group, r.plural)).toBe(`/registry/${r.storagePrefix}/`);
    }
  });
  it.each([
    ['/registry', 'stable.example.com', 'widgets', '/registry/stable.example.com/widgets/'],
    ['/custom/', '', 'things', '/custom/things/'],
  ])('unknown resources: (%s, %s, %s) -> %s', (prefix, group, resource, expected) => {
    expect(resourceKeyPrefix(prefix, group, resource)).toBe(expected);
  });
});
