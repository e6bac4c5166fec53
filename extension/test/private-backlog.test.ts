// The backlog runner (private/backlog.ts): a few messages in flight at a
// time, pause and resume, a locked key stops it, and a message whose answer
// was lost (background restarted) is offered once more, never more.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BacklogRun, type BacklogProgress, type Skip } from '../private/backlog.js';
import { backlogText } from '../private/backlog-text.js';

const links = (n: number) => Array.from({ length: n }, (_, i) => new URL(`http://127.0.0.1/mail/m/${i}`));
const idOf = (l: URL) => l.pathname.split('/').pop()!;
const tick = () => new Promise((r) => setTimeout(r, 5));

/** A background that answers each offered message when told to (answer()), and records offers. */
function fakeBackground(skip: (id: string) => Skip | undefined = () => undefined) {
  const offered: string[] = [];
  let run!: BacklogRun;
  return {
    offered,
    deps: {
      offer: async (l: URL) => {
        const id = idOf(l);
        offered.push(id);
        const s = skip(id);
        return s ? { skip: s } : { sourceId: `src-${id}` };
      },
    },
    bind: (r: BacklogRun) => (run = r),
    answer: (id: string) => run.settled(`src-${id}`),
  };
}

describe('BacklogRun', () => {
  it('keeps at most `window` messages in flight and finishes when all are answered', async () => {
    const bg = fakeBackground();
    const seen: BacklogProgress[] = [];
    const run = new BacklogRun(links(5), bg.deps, (p) => seen.push(p), { window: 2 });
    bg.bind(run);
    const finished = run.start();
    await tick();
    assert.deepEqual(bg.offered, ['0', '1'], 'two in flight, no more');
    bg.answer('0');
    await tick();
    assert.deepEqual(bg.offered, ['0', '1', '2']);
    for (const id of ['1', '2', '3', '4']) {
      bg.answer(id);
      await tick();
    }
    await finished;
    assert.deepEqual(bg.offered, ['0', '1', '2', '3', '4'], 'each message offered once');
    assert.deepEqual(seen.at(-1), { total: 5, done: 5, checked: 5, skipped: 0, unanswered: 0, state: 'done' });
  });

  it('pauses (what is in flight still settles) and resumes where it stopped', async () => {
    const bg = fakeBackground();
    const seen: BacklogProgress[] = [];
    const run = new BacklogRun(links(4), bg.deps, (p) => seen.push(p), { window: 1 });
    bg.bind(run);
    const first = run.start();
    await tick();
    run.pause();
    bg.answer('0');
    await first;
    await tick();
    assert.deepEqual(bg.offered, ['0'], 'nothing new offered while paused');
    assert.equal(seen.at(-1)?.state, 'paused');
    assert.equal(seen.at(-1)?.done, 1, 'the message in flight still counted');
    const rest = run.resume();
    for (const id of ['1', '2', '3']) {
      await tick();
      bg.answer(id);
    }
    await rest;
    assert.deepEqual(bg.offered, ['0', '1', '2', '3']);
    assert.equal(seen.at(-1)?.state, 'done');
  });

  it('a resume right after a pause is not lost', async () => {
    const bg = fakeBackground();
    const run = new BacklogRun(links(2), bg.deps, () => {}, { window: 1 });
    bg.bind(run);
    const done = run.start();
    run.pause();
    void run.resume();
    await tick();
    bg.answer('0');
    await tick();
    bg.answer('1');
    await done;
    assert.deepEqual(bg.offered, ['0', '1']);
  });

  it('a locked key stops the run; skipped messages are counted, not waited for', async () => {
    const bg = fakeBackground((id) => (id === '1' ? 'not-encrypted' : id === '2' ? 'locked' : undefined));
    const seen: BacklogProgress[] = [];
    const run = new BacklogRun(links(4), bg.deps, (p) => seen.push(p), { window: 4 });
    bg.bind(run);
    const done = run.start();
    await tick();
    bg.answer('0');
    await done;
    assert.deepEqual(bg.offered, ['0', '1', '2'], 'nothing after the locked one');
    assert.equal(seen.at(-1)?.state, 'locked');
    assert.equal(seen.at(-1)?.skipped, 2);
  });

  it('an answer that arrives before its offer returns still counts', async () => {
    let last: BacklogProgress | undefined;
    const run: BacklogRun = new BacklogRun(
      links(1),
      {
        offer: async (l) => {
          run.settled(`src-${idOf(l)}`);
          return { sourceId: `src-${idOf(l)}` };
        },
      },
      (p) => (last = p),
      { answerMs: 10 },
    );
    await run.start();
    assert.deepEqual([last?.checked, last?.unanswered], [1, 0]);
  });

  it('offers a message whose answer was lost once more, then gives up on it', async () => {
    const bg = fakeBackground();
    const seen: BacklogProgress[] = [];
    const run = new BacklogRun(links(2), bg.deps, (p) => seen.push(p), { window: 2, answerMs: 20 });
    bg.bind(run);
    const done = run.start();
    await tick();
    bg.answer('1');
    await done;
    assert.deepEqual(bg.offered, ['0', '1', '0'], 'message 0 offered twice, never three times');
    assert.deepEqual(seen.at(-1), { total: 2, done: 2, checked: 1, skipped: 0, unanswered: 1, state: 'done' });
  });

  it('waiting for a provider that is down: still in flight, said so, not offered again; goes on when it answers', async () => {
    const bg = fakeBackground();
    const seen: BacklogProgress[] = [];
    const run = new BacklogRun(links(3), bg.deps, (p) => seen.push(p), { window: 3, answerMs: 20 });
    bg.bind(run);
    const done = run.start();
    await tick();
    for (const id of ['0', '1', '2']) run.waiting(`src-${id}`, 'unreachable');
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(bg.offered, ['0', '1', '2'], 'a waiting message is not offered again after answerMs');
    assert.equal(seen.at(-1)?.state, 'waiting');
    assert.match(
      backlogText(seen.at(-1)!),
      /^Waiting for your provider: it cannot be reached right now \(0 of 3 done\)/,
    );
    for (const id of ['0', '1', '2']) bg.answer(id);
    await done;
    assert.equal(seen.at(-1)?.state, 'done');
  });

  it('paced by the provider: says so with the time left at the pace of the last answers', async () => {
    let now = 0;
    const bg = fakeBackground();
    const seen: BacklogProgress[] = [];
    const run = new BacklogRun(links(10), bg.deps, (p) => seen.push(p), { window: 1, now: () => now });
    bg.bind(run);
    const done = run.start();
    await tick();
    run.waiting('src-0', 'paced');
    for (let i = 0; i < 4; i++) {
      now += 30_000; // one message every 30 s
      bg.answer(String(i));
      await tick();
    }
    const p = seen.at(-1)!;
    assert.deepEqual([p.done, p.paced, p.leftMs], [4, true, 6 * 30_000]);
    assert.equal(
      backlogText(p),
      'Waiting for your provider, which limits how fast mail is checked (4 of 10, about 3 minutes left).',
    );
    for (let i = 4; i < 10; i++) {
      bg.answer(String(i));
      await tick();
    }
    await done;
    assert.equal(backlogText(seen.at(-1)!, 2), 'Checked 10 of 10 new messages for spam privately. 2 moved to Junk.');
  });
});
