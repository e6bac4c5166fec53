// docs/protocol.md#features-and-models on every held-out SpamAssassin email and every fifth
// 20 Newsgroups test post (all 20 columns each).
import { test } from 'node:test';
import { loadSpamAssassin, loadTwentyNews } from '../data/loaders.js';
import { checkPrivateEqualsPlain } from './private-check.js';

test('default spam model: private scores equal plainScores on held-out SpamAssassin mail', async () => {
  const held = loadSpamAssassin().filter((e) => e.split === 'test');
  await checkPrivateEqualsPlain(
    'spam.pmfm',
    held.filter((_, i) => i % 1 === 0),
  );
});

test('default topic model: private scores of every column equal plainScores on 20 Newsgroups test posts', async () => {
  const held = loadTwentyNews().filter((e) => e.split === 'test');
  await checkPrivateEqualsPlain(
    'topics.pmfm',
    held.filter((_, i) => i % 5 === 0),
  );
});
