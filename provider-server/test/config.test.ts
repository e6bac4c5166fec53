import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { clientAddress, isLoopback, loadConfig, originAllowed } from '../src/config.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

test('plain ws:// is refused on a non-loopback address', () => {
  assert.throws(() => loadConfig({ env: { PMF_HOST: '0.0.0.0' } }), /refusing plain ws:\/\//);
  assert.throws(() => loadConfig({ env: { PMF_HOST: '192.168.1.10' } }), /refusing plain/);
  assert.throws(() => loadConfig({ env: { PMF_HOST: 'example.org' } }), /refusing plain/);
  assert.equal(loadConfig({ env: { PMF_HOST: '127.0.0.1' } }).host, '127.0.0.1');
  assert.equal(loadConfig({ env: { PMF_HOST: '::1' } }).host, '::1');
  const tls = loadConfig({ env: { PMF_HOST: '0.0.0.0', PMF_TLS_CERT: 'c.pem', PMF_TLS_KEY: 'k.pem' } });
  assert.equal(tls.tls?.certFile, path.resolve('c.pem'));
  assert.throws(() => loadConfig({ env: { PMF_HOST: '0.0.0.0', PMF_TLS_CERT: 'c.pem' } }), /both/);
  assert.deepEqual(['127.0.0.2', 'localhost', '::1', '10.0.0.1', '::'].map(isLoopback), [
    true,
    true,
    true,
    false,
    false,
  ]);
});

test('the file is overlaid by the environment and validated', () => {
  const dir = tempDir('pmf-cfg-');
  const file = path.join(dir, 'server.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      port: 9000,
      dataDir: 'data',
      limits: { requestsPerMinute: 5 },
      models: [{ id: 'spam', file: 'm.bin' }],
    }),
  );
  const c = loadConfig({ file, env: { PMF_PORT: '9100' } });
  assert.equal(c.port, 9100);
  assert.equal(c.dataDir, path.join(dir, 'data'));
  assert.equal(c.limits.requestsPerMinute, 5);
  assert.ok(c.limits.maxFrameBytes > 0);
  assert.deepEqual(c.models, [{ id: 'spam', file: path.join(dir, 'm.bin') }]);
  assert.deepEqual(
    loadConfig({ env: { PMF_MODELS: 'a=/x/a.bin,b=/y/b.bin' } }).models.map((m) => m.id),
    ['a', 'b'],
  );
  assert.throws(() => loadConfig({ env: { PMF_PORT: '70000' } }), /PMF_PORT/);
  assert.throws(() => loadConfig({ env: { PMF_RATE_PER_MINUTE: '0' } }), /requestsPerMinute/);
  assert.throws(() => loadConfig({ env: { PMF_MODELS: 'bad id=/x' } }), /id matching/);
  assert.throws(() => loadConfig({ file: path.join(dir, 'missing.json') }), /cannot read/);
});

test('allowed origins: exact or scheme-wide, validated, from the environment too', () => {
  const c = loadConfig({ env: { PMF_ALLOWED_ORIGINS: 'https://mail.example,moz-extension://*' } });
  assert.deepEqual(c.allowedOrigins, ['https://mail.example', 'moz-extension://*']);
  assert.equal(originAllowed('https://mail.example', c.allowedOrigins), true);
  assert.equal(originAllowed('https://mail.example.evil', c.allowedOrigins), false);
  assert.equal(originAllowed('moz-extension://1234', c.allowedOrigins), true);
  assert.equal(originAllowed('chrome-extension://abcd', c.allowedOrigins), false);
  assert.throws(() => loadConfig({ env: { PMF_ALLOWED_ORIGINS: 'mail.example' } }), /allowedOrigins/);
  assert.throws(() => loadConfig({ env: {}, overrides: { allowedOrigins: ['https://*.example'] } }), /allowedOrigins/);
  assert.throws(
    () => loadConfig({ env: {}, overrides: { limits: { maxSendBufferBytes: 1000 } } }),
    /limits.maxSendBufferBytes/,
  );
});

test('behind a trusted proxy the client address is the last X-Forwarded-For entry', () => {
  const proxies = loadConfig({ env: { PMF_TRUSTED_PROXIES: '127.0.0.1,::1' } }).trustedProxies;
  assert.equal(clientAddress('127.0.0.1', '203.0.113.9', proxies), '203.0.113.9');
  // Entries before the last are the client's own claims: a forged one changes nothing.
  assert.equal(clientAddress('127.0.0.1', '10.9.9.9, 203.0.113.9', proxies), '203.0.113.9');
  assert.equal(clientAddress('127.0.0.1', ['1.1.1.1', '203.0.113.7'], proxies), '203.0.113.7');
  assert.equal(clientAddress('127.0.0.1', 'not-an-ip', proxies), '127.0.0.1');
  assert.equal(clientAddress('127.0.0.1', undefined, proxies), '127.0.0.1');
  // An untrusted peer cannot choose its address by sending the header itself.
  assert.equal(clientAddress('198.51.100.1', '203.0.113.9', proxies), '198.51.100.1');
  assert.throws(() => loadConfig({ env: { PMF_TRUSTED_PROXIES: 'proxy.local' } }), /trustedProxies/);
});
