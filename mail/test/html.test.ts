import assert from 'node:assert/strict';
import { test } from 'node:test';
import { htmlToText } from '../html.js';

test('comments join words, script/style are dropped, character references decoded', () => {
  assert.equal(htmlToText('Vi<!-- x -->agra<script>evil()</script>&lt;b&gt;&#233;&#x41;'), 'Viagra <b>éA');
  assert.equal(htmlToText('a&nbsp;&quot;b&quot;&apos;&#39;&unknown;&#xD800;'), 'a "b"\'\'&unknown;');
});

test('line breaks and block ends become newlines, other tags a space; display text is tidy', () => {
  assert.equal(htmlToText('<p>a &amp; b</p><script>alert(1)</script><div>c&lt;d</div>'), 'a & b\nc<d');
  assert.equal(htmlToText('<p>and <b>html</b></p>'), 'and html');
  assert.equal(htmlToText('one<br>two<br/><br><br><br>three'), 'one\ntwo\n\nthree');
  assert.equal(htmlToText('un<b>closed <i'), 'un closed');
});
