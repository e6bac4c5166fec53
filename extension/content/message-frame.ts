// The in-page UI for one message: a box in a closed shadow root, created from
// this isolated world (the page gets null for host.shadowRoot and cannot hook
// our attachShadow), holding the extension's viewer frame, which draws the
// status on the user's security background and the decrypted text, and a
// button to show the encrypted original. Nothing about the outcome goes into
// the page's DOM: the original is folded away as soon as an OpenPGP block is
// found, whatever the outcome, and the frame's box takes only the rounded
// heights the background relays (lib/viewer-height.ts), never the page's word.
import browser from 'webextension-polyfill';
import { VIEWER_HEIGHT, type ViewerHeightMessage } from '../lib/messages.js';
import { VIEWER_MIN_WIDTH, viewerHeight } from '../lib/viewer-height.js';
import { t } from '../lib/i18n.js';

// Nothing in the box reflows below the minimum width, so squeezing the host tells the page nothing
// (set inside the shadow root, where the page's styles do not reach).
const STYLE = `:host{display:block}.box{min-width:${VIEWER_MIN_WIDTH}px}
.frame{display:block;box-sizing:border-box;width:100%;height:${viewerHeight(0)}px;border:1px solid #ccc;border-radius:6px;margin:8px 0 4px}
button{font:12px system-ui,sans-serif;white-space:nowrap}.failed{font:13px system-ui,sans-serif;color:#7b1d12;margin:8px 0}`;

interface Box {
  root: ShadowRoot;
  slot: HTMLElement;
}
const boxes = new WeakMap<HTMLElement, Box>();
/** The frame showing each view, for its height reports. */
const frames = new Map<string, HTMLIFrameElement>();

/** Folds the encrypted original away behind a button, in the message's box (made on first use). */
export function foldOriginal(body: HTMLElement): void {
  if (boxes.has(body)) return;
  body.parentElement?.querySelector(':scope > .pmf-host')?.remove(); // one the page made to look like ours
  const host = document.createElement('div');
  host.className = 'pmf-host';
  const root = host.attachShadow({ mode: 'closed' });
  const slot = document.createElement('div');
  const toggle = Object.assign(document.createElement('button'), {
    type: 'button',
    textContent: t('frame_show_original'),
  });
  toggle.addEventListener('click', (e) => {
    if (!e.isTrusted) return; // the user's click, not the page's
    body.hidden = !body.hidden;
    toggle.textContent = t(body.hidden ? 'frame_show_original' : 'frame_hide_original');
  });
  const box = Object.assign(document.createElement('div'), { className: 'box' });
  box.append(slot, toggle);
  root.append(Object.assign(document.createElement('style'), { textContent: STYLE }), box);
  boxes.set(body, { root, slot });
  body.hidden = true;
  body.before(host);
}

/** Shows view `viewId` in a fresh viewer frame (a view id is good once). */
export function showView(body: HTMLElement, viewId: string): void {
  const box = boxes.get(body);
  if (!box) return;
  for (const [id, f] of frames) if (box.slot.contains(f)) frames.delete(id);
  const frame = document.createElement('iframe');
  frame.className = 'frame';
  frame.title = t('viewer_title');
  // runtime.getURL gives the per-session address where the browser has one (use_dynamic_url).
  frame.src = `${browser.runtime.getURL('viewer.html')}#${viewId}`;
  frames.set(viewId, frame);
  box.slot.replaceChildren(frame);
}

/** When the extension could not even ask about the message: says so in the box. */
export function showFailure(body: HTMLElement, why: string): void {
  const box = boxes.get(body);
  if (!box) return;
  box.slot.replaceChildren(
    Object.assign(document.createElement('p'), {
      className: 'failed',
      textContent: t('frame_failed', why),
    }),
  );
}

/** Sizes each frame by the height its viewer reported, as the background relays it (rounded again here). */
export function listenForViewerHeights(): void {
  browser.runtime.onMessage.addListener((msg: unknown) => {
    const m = msg as ViewerHeightMessage | null;
    if (m?.type !== VIEWER_HEIGHT || typeof m.viewId !== 'string') return undefined;
    const frame = frames.get(m.viewId);
    if (frame?.isConnected) frame.style.height = `${viewerHeight(m.height)}px`;
    return undefined;
  });
}
