// Thunderbird's scan for messages not looked at yet (thunderbird/folder-scan.ts)
// against the fake messenger: a folder is listed from its mark (less the
// slack for late mail), at most MAX_PER_SCAN of its newest at a time (the
// next scan takes the rest), a message looked at is not listed again, and
// the mark moves only once everything listed was looked at.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MailFolder } from '../thunderbird/api.js';
import { FolderScan, MAX_PER_SCAN, SLACK_MS } from '../thunderbird/folder-scan.js';
import { fakeMessenger, header } from './fake-messenger.js';

const inbox: MailFolder = { id: 'a/INBOX', accountId: 'a', specialUse: ['inbox'] };
const sent: MailFolder = { id: 'a/Sent', accountId: 'a', specialUse: ['sent'] };
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 21);

function area() {
  const data: Record<string, unknown> = {};
  return {
    data,
    get: async (k: string) => (k in data ? { [k]: structuredClone(data[k]) } : {}),
    set: async (items: Record<string, unknown>) => void Object.assign(data, structuredClone(items)),
  };
}

const mailAt = (id: number, at: number, folder = inbox) => ({
  header: header(id, { date: new Date(at), folder: { ...folder }, size: 1000 + id }),
  raw: '',
});

describe('FolderScan', () => {
  it('lists each receiving folder from its first look-back, oldest first; sent mail is not scanned', async () => {
    const mail = [mailAt(1, NOW - 20 * DAY), mailAt(2, NOW - 2 * DAY), mailAt(3, NOW - DAY), mailAt(4, NOW, sent)];
    const fake = fakeMessenger({ mail, folders: [inbox, sent] });
    const scan = new FolderScan(fake.api, area(), 'spam', { firstLookbackMs: 14 * DAY, now: () => NOW });
    const found = await scan.start();
    assert.deepEqual(
      found.headers.map((h) => h.id),
      [2, 3],
    );
    assert.deepEqual(found.folders, ['a/INBOX']);
  });

  it('at most MAX_PER_SCAN per folder (the newest); the mark stays until the rest was looked at', async () => {
    const mail = Array.from({ length: MAX_PER_SCAN + 1 }, (_, i) => mailAt(i + 1, NOW - DAY + i * 1000));
    const fake = fakeMessenger({ mail, folders: [inbox] });
    let now = NOW;
    const store = area();
    const scan = new FolderScan(fake.api, store, 'spam', { firstLookbackMs: 7 * DAY, now: () => now });
    const first = await scan.start();
    assert.equal(first.headers.length, MAX_PER_SCAN);
    assert.equal(first.headers[0].id, 2, 'the oldest one waits for the next scan');
    for (const h of first.headers) await scan.lookedAt(h);
    await scan.finish(first);
    now += 60_000;
    const second = await scan.start();
    assert.deepEqual(
      second.headers.map((h) => h.id),
      [1],
    );
    await scan.lookedAt(second.headers[0]);
    await scan.finish(second);
    // All looked at: the mark moved to the second scan's start, and the keys it passed are forgotten.
    const state = (store.data['pmf-tb-scan-spam'] as Record<string, { mark: number; seen: object }>)['a/INBOX'];
    assert.equal(state.mark, now);
    assert.equal(Object.keys(state.seen).length, MAX_PER_SCAN + 1, 'all still within the slack: kept');
    assert.deepEqual((await scan.start()).headers, [], 'nothing left');
  });

  it('a message not looked at (locked, provider down) keeps the mark; one that comes late (within the slack) is found', async () => {
    let now = NOW;
    const mail = [mailAt(1, NOW - DAY), mailAt(2, NOW - DAY + 1)];
    const fake = fakeMessenger({ mail, folders: [inbox] });
    const store = area();
    const scan = new FolderScan(fake.api, store, 'spam', { firstLookbackMs: 7 * DAY, now: () => now });
    const first = await scan.start();
    await scan.lookedAt(first.headers[0]);
    await scan.finish(first);
    now += DAY;
    assert.deepEqual(
      (await scan.start()).headers.map((h) => h.id),
      [2],
      'not looked at: listed again',
    );
    // Everything looked at: the mark moves; mail dated before it but delivered later is still found.
    const again = await scan.start();
    await scan.lookedAt(again.headers[0]);
    await scan.finish(again);
    mail.push(mailAt(3, now - SLACK_MS / 2));
    now += 60_000;
    assert.deepEqual(
      (await scan.start()).headers.map((h) => h.id),
      [3],
    );
  });
});
