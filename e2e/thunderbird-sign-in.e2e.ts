// Connecting without an operator, in a real Thunderbird ESR (docs/connecting.md):
// a fresh profile with only an IMAP account on a local Dovecot and the
// add-on, whose user imports a key and types nothing but the mail address
// and its password. The add-on finds the provider from the address (the
// mail domain "localhost" publishes the discovery document on port 80),
// provider-server checks the password with Dovecot's auth service and
// issues a token (the account is made at its first sign-in: no add-user,
// no issue-token), and spam delivered through the provider's LMTP stage
// ends in Junk on the server. A wrong password is refused in plain words
// first, and Disconnect revokes the token at the provider.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { makeParty, type Party } from '../extension/test/mail-fixtures.js';
import { lmtpSend } from '../provider-server/src/lmtp/lmtp-client.js';
import { openStore, type Provider } from '../provider-server/src/provider.js';
import { DISCOVERY_PATH } from '../protocol/sign-in.js';
import { ensureBuilt, resultPath, root } from './fixtures/browser.js';
import { caughtSpam } from './fixtures/caught-spam.js';
import { serveDiscovery, type DiscoveryHost } from './fixtures/discovery-host.js';
import { startDovecot, type Dovecot } from './fixtures/dovecot.js';
import { startLmtpStage, type RunningStage } from './fixtures/lmtp-stage.js';
import { freePort } from './fixtures/process.js';
import { startLoopbackProvider } from './fixtures/provider.js';
import {
  IMPORT_AND_UNLOCK,
  inAddonPage,
  pageFn,
  startThunderbird,
  thunderbirdSkipReason,
  type RunningThunderbird,
} from './fixtures/thunderbird.js';

const skip = thunderbirdSkipReason();
const ADDRESS = 'alice@localhost';
const PASSWORD = 'imap-secret';
let alice: Party;
let dir: string;
let dovecot: Dovecot;
let stage: RunningStage;
let provider: Provider;
let discovery: DiscoveryHost;
let tb: RunningThunderbird;

const optionsPage = <T>(body: string, args: unknown[] = []) =>
  inAddonPage<T>(tb.marionette, 'options.html', pageFn(body), args);

/** Fills the sign-in form and waits for the status line to settle: [connected, text]. */
const connectWith = (password: string) =>
  optionsPage<[string, string]>(
    `await until(() => $('#provider-status').dataset.kind, 'the provider section');
     const form = $('#provider-sign-in');
     form.querySelector('input[name=address]').value = args[0];
     form.querySelector('input[name=password]').value = args[1];
     form.querySelector('input[name=topics][value=keep]').checked = true;
     $('#provider-status').dataset.kind = ''; // the last attempt's error is not this one's
     form.querySelector('button').click();
     for (let i = 0; i < 1200; i++) {
       const line = $('#provider-status');
       if (line.dataset.connected === 'true' || line.dataset.kind === 'error') return [line.dataset.connected, line.textContent];
       await new Promise((r) => win.setTimeout(r, 100));
     }
     return ['timeout', $('#provider-status').textContent];`,
    [ADDRESS, password],
  );

const tokensOfAlice = async () => {
  const store = await openStore({ dataDir: path.join(dir, 'provider') });
  try {
    const id = await store.userId('alice');
    return id === undefined ? undefined : await store.tokens.list(id, { lifetimeMs: 90 * 86_400_000 });
  } finally {
    await store.close();
  }
};

before(
  async () => {
    if (skip) return;
    ensureBuilt();
    alice = await makeParty('Alice', ADDRESS);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-tb-sign-in-'));
    fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
    dovecot = await startDovecot(path.join(dir, 'dovecot'), { alice: PASSWORD });
    const dataDir = path.join(dir, 'provider');
    const port = await freePort();
    provider = await startLoopbackProvider(dataDir, {
      port,
      signIn: {
        publicUrl: `http://127.0.0.1:${port}`,
        domains: ['localhost'],
        dovecotAuth: path.join(dir, 'dovecot', 'run', 'auth-client'),
      },
    });
    // The mail domain's web server publishes what the provider serves.
    discovery = await serveDiscovery(await (await fetch(`${provider.server.httpUrl}${DISCOVERY_PATH}`)).text());
    stage = await startLmtpStage({ dir, dataDir, port: await freePort(), relayPort: dovecot.lmtpPort });
    const account = { port: dovecot.port, user: 'alice', password: PASSWORD, email: ADDRESS };
    tb = await startThunderbird(path.join(dir, 'thunderbird'), account, path.join(root, 'dist/pmf-thunderbird.xpi'));
  },
  { timeout: 180_000 },
);
after(async () => {
  await tb?.stop();
  await stage?.stop();
  await discovery?.close();
  await provider?.close();
  await dovecot?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('Thunderbird connects from the mail address and its password', { skip, timeout: 600_000 }, () => {
  it('imports Alice’s key, and a wrong password is refused in plain words, with no account made', async () => {
    await inAddonPage(tb.marionette, 'welcome.html', pageFn(`win.location.href = 'options.html'; return true;`));
    await optionsPage(`${IMPORT_AND_UNLOCK} return true;`, [alice.privateArmored, alice.passphrase]);
    const [connected, text] = await connectWith('not-the-password');
    assert.equal(connected, 'false');
    assert.match(text, /Wrong address or password/);
    assert.equal(await tokensOfAlice(), undefined, 'no account at the provider');
    assert.equal(discovery.served(), 1, 'the provider was found from the address');
  });

  it('the right password connects; spam delivered over LMTP is checked privately and ends in Junk', async () => {
    const [connected, text] = await connectWith(PASSWORD);
    fs.writeFileSync(resultPath('thunderbird-sign-in.png'), await tb.marionette.screenshot());
    assert.equal(connected, 'true', text);
    assert.match(text, /Connected to http:\/\/127\.0\.0\.1:\d+/);
    const tokens = await tokensOfAlice();
    assert.deepEqual(
      tokens?.map((t) => t.kind),
      ['signin'],
      'one token, from the sign-in',
    );
    const spam = await caughtSpam(2);
    for (const [i, e] of spam.entries()) {
      const armored = await openpgp.encrypt({
        message: await openpgp.createMessage({ text: e.raw as string }),
        encryptionKeys: alice.publicKey,
      });
      const raw = `From: bob@example.org\r\nTo: ${ADDRESS}\r\nSubject: Offer ${i}\r\nMessage-ID: <sign-in-offer-${i}@example.org>\r\n\r\n${armored.replace(/\r?\n/g, '\r\n')}`;
      const reply = await lmtpSend(
        { host: '127.0.0.1', port: stage.port, timeoutMs: 30_000 },
        { from: 'bob@example.org', to: [ADDRESS], data: Buffer.from(raw) },
      );
      assert.equal(reply.data[0]?.code, 250, reply.data[0]?.text);
    }
    let junk: string[] = [];
    for (
      const deadline = Date.now() + 240_000;
      junk.length < spam.length;
      await new Promise((r) => setTimeout(r, 1000))
    ) {
      junk = await dovecot.subjectsIn('alice', 'Junk');
      if (junk.length < spam.length && Date.now() > deadline) {
        fs.writeFileSync(resultPath('thunderbird-sign-in-output.txt'), tb.output());
        assert.fail(`in Junk on the server: ${junk.join(', ') || 'nothing'}`);
      }
    }
    assert.deepEqual(junk.sort(), ['Offer 0', 'Offer 1']);
  });

  it('Disconnect revokes the token at the provider', async () => {
    await optionsPage(
      `$('#provider-disconnect').click();
       await until(() => $('#provider-status').dataset.connected === 'false', 'the disconnect');
       return true;`,
    );
    assert.deepEqual(await tokensOfAlice(), [], 'no live token left');
  });
});
