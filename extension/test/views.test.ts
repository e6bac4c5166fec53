import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_OPEN_VIEWS, VIEW_GONE, ViewStore } from '../background/views.js';
import type { DecryptResult } from '../lib/decrypt.js';

const result: DecryptResult = {
  status: 'decrypted',
  summary: 'Decrypted.',
  signature: { status: 'unsigned' },
  text: 'The pangolin budget.',
};
/** The content script in tab 7's top frame asks; its viewer frame is frame 3 of that tab. */
const asker = { tabId: 7, frameId: 0 };
const viewer = { tab: { id: 7 }, frameId: 3 };

describe('ViewStore: what a viewer frame may show', () => {
  it('hands the result once, to a frame of the asking tab, then forgets it', () => {
    const views = new ViewStore();
    const id = views.add(result, asker);
    assert.deepEqual(views.take(id, viewer), result);
    assert.throws(
      () => views.take(id, viewer),
      { message: VIEW_GONE },
      'a second look (a reload, a copy) gets nothing',
    );
  });

  it('refuses another tab, the asking frame itself, a sender without a tab, and an unknown id', () => {
    const views = new ViewStore();
    const id = views.add(result, asker);
    assert.throws(() => views.take(id, { tab: { id: 8 }, frameId: 3 }), { message: VIEW_GONE });
    assert.throws(() => views.take(id, { tab: { id: 7 }, frameId: 0 }), { message: VIEW_GONE });
    assert.throws(() => views.take(id, { frameId: 3 }), { message: VIEW_GONE });
    assert.throws(() => views.take('not-an-id', viewer), { message: VIEW_GONE });
    assert.throws(() => views.take({ toString: () => id }, viewer), { message: VIEW_GONE });
    assert.deepEqual(views.take(id, viewer), result, 'the refusals did not use it up');
  });

  it('expires an unopened view', () => {
    let now = 1_000;
    const views = new ViewStore(60_000, () => now);
    const id = views.add(result, asker);
    now += 60_000;
    assert.throws(() => views.take(id, viewer), { message: VIEW_GONE });
  });

  it('routes heights only from the viewer frame that opened the view, to the frame that asked', () => {
    const views = new ViewStore();
    const id = views.add(result, asker);
    assert.equal(views.heightRoute(id, viewer), undefined, 'not before it is opened');
    views.take(id, viewer);
    assert.deepEqual(views.heightRoute(id, viewer), asker);
    assert.equal(views.heightRoute(id, { tab: { id: 7 }, frameId: 4 }), undefined, 'another frame of the tab');
    assert.equal(views.heightRoute(id, { tab: { id: 9 }, frameId: 3 }), undefined, 'another tab');
  });

  it('keeps a bounded number of routes, and nothing after a lock', () => {
    const views = new ViewStore();
    const first = views.add(result, asker);
    views.take(first, viewer);
    for (let i = 0; i < MAX_OPEN_VIEWS; i++) views.take(views.add(result, asker), viewer);
    assert.equal(views.heightRoute(first, viewer), undefined, 'the oldest route went');
    const waiting = views.add(result, asker);
    views.clear();
    assert.throws(() => views.take(waiting, viewer), { message: VIEW_GONE });
  });
});
