// What a viewer frame may show (lib/messages.ts `view`): the outcome of one
// decrypt request, under an unguessable id that goes back to the content
// script that asked, which puts it in the address of a frame in its closed
// shadow root (out of the page's reach). The id is good once, for a viewer
// frame in the asking tab, for a short while; after that only the route for
// the frame's height stays: from that viewer frame to the asking frame.
import type { DecryptResult } from '../lib/decrypt.js';

/** The tab and frame of the content script that asked. */
export interface ViewRoute {
  tabId: number;
  frameId: number;
}

/** Who asks for a view, as the browser names the sender. */
export interface Asker {
  tab?: { id?: number };
  frameId?: number;
}

/** How long a view waits for its frame (it loads at once; a slow machine may take seconds). */
export const VIEW_TTL_MS = 2 * 60_000;
/** Routes of opened views kept for height reports; the oldest go first. */
export const MAX_OPEN_VIEWS = 500;

export const VIEW_GONE = 'This decrypted view is no longer available; reload the message.';

export class ViewStore {
  private readonly waiting = new Map<string, { result: DecryptResult; route: ViewRoute; expires: number }>();
  private readonly opened = new Map<string, { route: ViewRoute; viewer: ViewRoute }>();

  constructor(
    private readonly ttlMs = VIEW_TTL_MS,
    private readonly now = Date.now,
  ) {}

  /** Keeps a result for the content script at `route`; returns its view id. */
  add(result: DecryptResult, route: ViewRoute): string {
    const now = this.now();
    for (const [id, v] of this.waiting) if (v.expires <= now) this.waiting.delete(id);
    const id = crypto.randomUUID();
    this.waiting.set(id, { result, route, expires: now + this.ttlMs });
    return id;
  }

  /**
   * Hands the result to the viewer frame asking, once: it must be a frame of
   * the asking tab other than the asking frame itself. The result leaves this store.
   */
  take(viewId: unknown, viewer: Asker): DecryptResult {
    const v = typeof viewId === 'string' ? this.waiting.get(viewId) : undefined;
    const at = routeOf(viewer);
    if (!v || v.expires <= this.now() || !at || at.tabId !== v.route.tabId || at.frameId === v.route.frameId)
      throw new Error(VIEW_GONE);
    this.waiting.delete(viewId as string);
    this.opened.set(viewId as string, { route: v.route, viewer: at });
    if (this.opened.size > MAX_OPEN_VIEWS) this.opened.delete(this.opened.keys().next().value!);
    return v.result;
  }

  /** Where a height reported by this viewer frame goes: the content script that asked, or nowhere. */
  heightRoute(viewId: unknown, viewer: Asker): ViewRoute | undefined {
    const v = typeof viewId === 'string' ? this.opened.get(viewId) : undefined;
    const at = routeOf(viewer);
    return v && at && at.tabId === v.viewer.tabId && at.frameId === v.viewer.frameId ? v.route : undefined;
  }

  /** On lock: every waiting result is dropped. */
  clear(): void {
    this.waiting.clear();
    this.opened.clear();
  }
}

function routeOf(sender: Asker): ViewRoute | undefined {
  const tabId = sender.tab?.id;
  return tabId === undefined || sender.frameId === undefined ? undefined : { tabId, frameId: sender.frameId };
}
