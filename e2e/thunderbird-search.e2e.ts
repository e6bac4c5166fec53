// Local search in a real Thunderbird ESR (Debian's, headless): after the user
// unlocks the add-on's key, "Index all mail" indexes the IMAP mailbox, the
// search page finds a message and its result opens that message in a
// Thunderbird tab (messageDisplay.open). Screenshot in test-results/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inlinePgpMessage, makeParty, type Party } from '../extension/test/mail-fixtures.js';
import { ensureBuilt, resultPath } from './fixtures/browser.js';
import { stopAll } from './fixtures/process.js';
import { startDovecot, type Dovecot } from './fixtures/dovecot.js';
import {
  IMPORT_AND_UNLOCK,
  inAddonPage,
  startAliceThunderbird,
  pageFn,
  thunderbirdSkipReason,
  type RunningThunderbird,
} from './fixtures/thunderbird.js';

const skip = thunderbirdSkipReason();
let alice: Party, bob: Party;
let dir: string;
let dovecot: Dovecot;
let tb: RunningThunderbird;

const inPage = <T>(page: string, body: string, args: unknown[] = []) =>
  inAddonPage<T>(tb.marionette, page, pageFn(body), args);

before(
  async () => {
    if (skip) return;
    ensureBuilt();
    [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-tb-search-'));
    fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
    dovecot = await startDovecot(path.join(dir, 'dovecot'), { alice: 'imap-secret' });
    dovecot.deliver('alice', await inlinePgpMessage(bob, alice, 'Capybara', 'The capybara survey starts Monday.'));
    dovecot.deliver('alice', await inlinePgpMessage(bob, alice, 'Lunch', 'Inline lunch on Friday?'));
    tb = await startAliceThunderbird(dir, dovecot);
  },
  { timeout: 180_000 },
);
after(() => stopAll(dir, tb, dovecot));

describe('Thunderbird: index all mail, search, open the result', { skip, timeout: 240_000 }, () => {
  it('indexes the mailbox from the options page once the key is unlocked', async () => {
    await inPage('welcome.html', `win.location.href = 'options.html'; return true;`);
    const status = await inPage<string>(
      'options.html',
      `${IMPORT_AND_UNLOCK}
      // The IMAP messages must be listed before indexing them all.
      let last = '';
      for (let i = 0; i < 20 && !/^Done: 2 of 2 /.test(last); i++) {
        await until(() => $('#tb-index-start').textContent === 'Index all mail' && !$('#tb-index-start').disabled, 'the button');
        $('#tb-index-status').removeAttribute('data-kind');
        $('#tb-index-start').click();
        await until(() => $('#tb-index-status').dataset.kind, 'the indexing');
        last = $('#tb-index-status').textContent;
        await new Promise((r) => win.setTimeout(r, 500));
      }
      return $('#tb-index-status').textContent;`,
      [alice.privateArmored, alice.passphrase],
    );
    assert.match(status, /Done: 2 of 2 messages read, 2 decrypted and indexed/);
  });

  it('finds a message on the search page and opens it in a Thunderbird tab', async () => {
    await inPage('options.html', `win.location.href = 'search.html?q=capybara'; return true;`);
    const subjects = await inPage<string[]>(
      'search.html',
      `await until(() => $('#results button.hit-subject'), 'a result');
      const found = [...win.document.querySelectorAll('.hit-subject')].map((e) => e.textContent);
      $('#results button.hit-subject').click();
      return found;`,
    );
    assert.deepEqual(subjects, ['Capybara']);
    const opened = await tb.marionette.run<string>(
      `const win = Services.wm.getMostRecentWindow('mail:3pane');
       for (let i = 0; i < 100; i++) {
         const tab = win.gTabmail.tabInfo.find((t) => t.mode.name === 'mailMessageTab');
         const subject = tab?.chromeBrowser?.contentWindow?.gMessage?.mime2DecodedSubject;
         if (subject) { win.gTabmail.switchToTab(tab); return subject; }
         await new Promise((r) => win.setTimeout(r, 100));
       }
       return '';`,
    );
    assert.equal(opened, 'Capybara');
    fs.writeFileSync(resultPath('thunderbird-search-opened.png'), await tb.marionette.screenshot());
  });
});
