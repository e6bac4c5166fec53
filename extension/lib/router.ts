// The one router of the runtime messages the background answers. Each
// vocabulary (lib/messages.ts, private/messages.ts, search/messages.ts,
// remote-search/messages.ts) is a row of one table: how its messages are
// recognized, who may send them and what answers them; the background
// registers the table once (background/background.ts), as one listener.
// A message no row recognizes, or from a sender a row does not allow, gets
// no answer unless the row says how it is refused.
import type { Runtime } from 'webextension-polyfill';

/** What the router needs of browser.runtime. */
export type RuntimeLike = Pick<Runtime.Static, 'id' | 'getURL'> & {
  onMessage: { addListener(cb: (msg: unknown, sender: Runtime.MessageSender) => Promise<unknown> | undefined): void };
};

/**
 * Who sent a message: an extension page (options, popup, viewer, search,
 * offscreen), our content script in a web page's tab, or another context
 * of this extension (Thunderbird's message display script).
 */
export type SenderKind = 'page' | 'tab' | 'extension';

/** The sender's kind; undefined for anything that is not this extension. */
export function senderKind(runtime: RuntimeLike, sender: Runtime.MessageSender): SenderKind | undefined {
  if (sender.id !== runtime.id) return undefined;
  if ((sender.url ?? '').startsWith(runtime.getURL(''))) return 'page';
  if (sender.tab !== undefined && /^https?:/.test(sender.url ?? '')) return 'tab';
  return 'extension';
}

/** One vocabulary of the table. */
export interface Route<M = unknown> {
  /** Recognizes a message of this vocabulary (the first row that does, answers). */
  is(msg: unknown): msg is M;
  /** The senders it answers. */
  from: readonly SenderKind[];
  /** What any other sender gets; absent: no answer. */
  refusal?: unknown;
  answer(msg: M, sender: Runtime.MessageSender, kind: SenderKind): Promise<unknown>;
}

/** A row, typed by its recognizer. */
export const route = <M>(r: Route<M>): Route<M> => r;

/** Registers the table: the one runtime.onMessage listener of the background. */
export function listen(runtime: RuntimeLike, table: readonly Route[]): void {
  runtime.onMessage.addListener((msg: unknown, sender: Runtime.MessageSender) => {
    const kind = senderKind(runtime, sender);
    const row = kind && table.find((r) => r.is(msg));
    if (!kind || !row) return undefined;
    if (!row.from.includes(kind)) return row.refusal === undefined ? undefined : Promise.resolve(row.refusal);
    return row.answer(msg, sender, kind);
  });
}
