// The extension frame a webmail message is shown in: the outcome's status on
// the user's security background and, once decrypted, the text. Being on the
// extension's origin, its DOM is out of the page's reach. Its view id comes in
// its address's fragment (set by the content script, in a closed shadow root)
// and is good once (background/views.ts). Its height goes to the content
// script through the background, rounded (lib/viewer-height.ts), never to the page.
// The background keeps no copy once the frame has it, so a lock reaches the
// frame itself (lib/lock-signal.ts), which wipes what it shows.
// With ?line, it is one line of a mailbox list: the protected subject only.
import '../lib/localize-page.js';
import { onKeysLocked } from '../lib/lock-signal.js';
import type { ViewContent } from '../lib/messages.js';
import { toPlain } from '../lib/plain-error.js';
import { ask } from '../lib/rpc.js';
import { paintSecurityBackground } from '../lib/security-background.js';
import { renderStatus, renderWiped } from './status.js';
import { t } from '../lib/i18n.js';

const $ = (id: string) => document.getElementById(id)!;
const viewId = location.hash.slice(1);
/** One line of a mailbox list (?line): the protected subject only. */
const line = new URLSearchParams(location.search).has('line');
history.replaceState(null, '', location.pathname + location.search); // a reload asks no more
let wiped = false;

let lastHeight = 0;
function reportHeight(): void {
  // The content's own height (the body's box and its margins), not the frame's: a frame made taller can shrink again.
  const height = Math.ceil(document.body.getBoundingClientRect().height) + 16;
  if (height === lastHeight) return;
  lastHeight = height;
  ask({ type: 'viewer-height', viewId, height }).catch(() => {});
}

async function show(): Promise<void> {
  document.body.classList.toggle('line', line);
  try {
    const { result: r, security } = await ask<ViewContent>({ type: 'view', viewId });
    if (line) return void ($('subject').hidden = !($('subject').textContent = r.subject ?? ''));
    paintSecurityBackground($('status'), $('phrase'), security);
    if (wiped) {
      renderWiped($('status'), $('summary')); // locked while the view was on its way
      return;
    }
    renderStatus($('status'), $('summary'), r);
    if (r.subject) {
      $('subject').textContent = r.subject;
      $('subject').hidden = false;
    }
    $('text').textContent = r.text ?? '';
    if (r.attachments?.length) {
      for (const a of r.attachments) {
        const li = document.createElement('li');
        li.textContent = t('attachment_line', a.filename, a.mimeType, t('size_bytes', a.size));

        $('attachments').append(li);
      }
      $('attachments').hidden = false;
    }
  } catch (e) {
    if (line) return; // a list line that expired shows the list's own "..."
    $('error').textContent = toPlain(e).message;
    $('error').hidden = false;
  }
  new ResizeObserver(reportHeight).observe(document.body);
}

/** Keys locked or expired: the decrypted text must not stay on screen. */
function wipe(): void {
  wiped = true;
  if (line) return void $('subject').replaceChildren();
  for (const id of ['subject', 'text', 'attachments']) {
    $(id).replaceChildren();
    $(id).hidden = true;
  }
  // Only a status already drawn on the security background is redrawn (a failed view shows none).
  if (!$('status').hidden) renderWiped($('status'), $('summary'));
}

onKeysLocked(wipe);
void show();
