/** The start-cluster-authentication-info-controller hook publishes the trusted client CA. */
import {describe, expect, it} from '@jest/globals';
import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import {startApiServer} from '../helpers/apiserver.js';

describe('extension-apiserver-authentication', () => {
  it('holds the client CA the server trusts, once the hook has passed', async () => {
    const s = await startApiServer({engine: 'sqlite'});
    try {
      const ready = await s.client.get('/readyz/poststarthook/start-cluster-authentication-info-controller');
      expect(ready.status).toBe(200);
      const cm = await s.client.get('/api/v1/namespaces/orch-system/configmaps/extension-apiserver-authentication');
      expect(cm.status).toBe(200);
      const ca = readFileSync(join(s.server.config.certDir, 'ca.crt'), 'utf8');
      expect(cm.body.data['client-ca-file']).toContain(ca.trim());
    } finally {
      await s.stop();
    }
  }, 30_000);
});
