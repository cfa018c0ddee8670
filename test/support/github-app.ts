import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeGitHub } from './fake-github/server.js';

/**
 * emend's GitHub App on the fake GitHub, made as an operator registers it (its webhook, setup and
 * callback URLs under `base`, emend's address), and the EMEND_SCM_HOSTS entry that configures it,
 * its private key written 0600 into `keyDir`.
 */
export function appOnFake(f: FakeGitHub, base: string, keyDir: string) {
  const app = f.addApp({
    slug: 'emend',
    webhookUrl: `${base}/v1/apps/github/webhook`,
    setupUrl: `${base}/v1/apps/github/setup`,
    callbackUrl: `${base}/v1/auth/scm/callback`,
  });
  const keyFile = join(keyDir, 'app.pem');
  writeFileSync(keyFile, app.privateKey, { mode: 0o600 });
  const entry = {
    id: 'github',
    kind: 'github',
    web_url: f.webUrl,
    api_url: f.apiUrl,
    app: {
      app_id: app.id,
      slug: app.slug,
      private_key_file: keyFile,
      webhook_secret: app.webhookSecret,
      client_id: app.clientId,
      client_secret: app.clientSecret,
    },
  };
  return { app, entry };
}
