// Extension frame inside the webmail page that shows decrypted plaintext.
// Being on the extension's origin, its DOM is out of the page's reach. With
// ?line, it is one line of a mailbox list: the protected subject only.
import type { DecryptResult } from '../lib/decrypt.js';
import { onKeysLocked } from '../lib/lock-signal.js';
import { toPlain } from '../lib/plain-error.js';
import { ask } from '../lib/rpc.js';

const $ = (id: string) => document.getElementById(id)!;

function reportHeight(): void {
  // Only the height leaves the frame, so the page can size it.
  parent.postMessage({ pmfViewerHeight: document.documentElement.scrollHeight }, '*');
}

const line = new URLSearchParams(location.search).has('line');

async function show(): Promise<void> {
  const viewId = new URLSearchParams(location.search).get('v') ?? '';
  document.body.classList.toggle('line', line);
  try {
    const r = await ask<DecryptResult>({ type: 'view', viewId });
    if (line) return void ($('subject').hidden = !($('subject').textContent = r.subject ?? ''));
    if (r.subject) {
      $('subject').textContent = r.subject;
      $('subject').hidden = false;
    }
    $('text').textContent = r.text ?? '';
    if (r.attachments?.length) {
      for (const a of r.attachments) {
        const li = document.createElement('li');
        li.textContent = `Attachment: ${a.filename} (${a.mimeType}, ${a.size} bytes)`;
        $('attachments').append(li);
      }
      $('attachments').hidden = false;
    }
  } catch (e) {
    if (line) return; // a list line that expired shows the list's own "..."
    $('error').textContent = toPlain(e).message;
    $('error').hidden = false;
  }
  reportHeight();
}

/** Keys locked or expired: the decrypted text must not stay on screen. */
function wipe(): void {
  if (line) return void $('subject').replaceChildren();
  for (const id of ['subject', 'text', 'attachments']) {
    $(id).replaceChildren();
    $(id).hidden = true;
  }
  $('error').textContent =
    'Your keys were locked, so this message is hidden again. Unlock them and reload the page to read it.';
  $('error').hidden = false;
}

onKeysLocked(wipe);
new ResizeObserver(reportHeight).observe(document.body);
void show();
