// The bundled models are a demo: a provider that serves one outside the
// demo is told at start, in its log and on /healthz, what to do first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trainedOnPublicCorpora } from '../../models/plain/index.js';
import { startRealProvider } from './real-provider.js';

async function healthz(url: string): Promise<{ status: string; warnings?: string[] }> {
  return (await fetch(`${url}/healthz`)).json() as Promise<{ status: string; warnings?: string[] }>;
}

test('serving the bundled spam model for real: a warning in the log and on /healthz; none in the demo', async () => {
  const log: string[] = [];
  const real = await startRealProvider({ log: (l) => log.push(l) });
  try {
    const h = await healthz(real.server.httpUrl);
    assert.equal(h.status, 'ok', 'still healthy: a warning is not an outage');
    assert.equal(h.warnings?.length, 1);
    assert.match(h.warnings![0], /model spam is a demo model, trained only on the public corpus spamassassin/);
    assert.match(h.warnings![0], /Train one on your own mail/);
    assert.ok(
      log.some((l) => {
        const { level, msg } = JSON.parse(l) as { level: string; msg: string };
        return level === 'warn' && msg.startsWith('model spam is a demo model');
      }),
      log.join('\n'),
    );
  } finally {
    await real.close();
  }
  const demo = await startRealProvider({ overrides: { demo: true } });
  try {
    assert.equal((await healthz(demo.server.httpUrl)).warnings, undefined);
  } finally {
    await demo.close();
  }
});

test('a model is a demo when every source it was trained on is a bundled public corpus', () => {
  const h = (source?: string) => ({ trainedOn: source === undefined ? undefined : { source } }) as never;
  assert.equal(trainedOnPublicCorpora(h('spamassassin')), true);
  assert.equal(trainedOnPublicCorpora(h('20news reuters')), true);
  assert.equal(trainedOnPublicCorpora(h('spamassassin /srv/mail/store.db')), false, 'with the provider’s own mail');
  assert.equal(trainedOnPublicCorpora(h('/var/vmail')), false);
  assert.equal(trainedOnPublicCorpora(h()), false, 'no record: not claimed to be a demo');
});
