// A fake Thunderbird `messenger` typed as ThunderbirdApi (so it cannot grow
// members the add-on does not declare) and checked against the installed
// Thunderbird's schemas by tb-schema.test.ts (so it cannot offer APIs the
// real one lacks).
import type { MailFolder, MessageHeader, MessageList, MessagePart, ThunderbirdApi } from '../thunderbird/api.js';

export interface FakeMail {
  header: MessageHeader;
  raw: string;
  /** What messages.getFull returns (Thunderbird's own decryption). */
  full?: MessagePart;
}

type Listener = (...args: never[]) => void;

/** api is the fake; calls records every API call; listeners the registered event listeners. */
export function fakeMessenger(opts: {
  mail?: FakeMail[];
  displayed?: number;
  pageSize?: number;
  folders?: MailFolder[];
}) {
  const mail = opts.mail ?? [];
  const folders = opts.folders ?? [];
  const junk = new Map<number, boolean>();
  const calls: string[] = [];
  const listeners: Record<string, Listener[]> = {};
  const byId = (id: number) => {
    const m = mail.find((x) => x.header.id === id);
    if (!m) throw new Error(`Message not found: ${id}`);
    return m;
  };
  const pages = new Map<string, MessageHeader[]>();
  const page = (headers: MessageHeader[]): MessageList => {
    const size = opts.pageSize ?? 100;
    if (headers.length <= size) return { id: null, messages: headers };
    const id = `page${pages.size}`;
    pages.set(id, headers.slice(size));
    return { id, messages: headers.slice(0, size) };
  };
  const event = (name: string) => ({
    addListener: (l: Listener) => void (listeners[name] ??= []).push(l),
  });
  const fire = (name: string, ...args: unknown[]) =>
    (listeners[name] ?? []).forEach((l) => (l as (...a: unknown[]) => void)(...args));
  const scripts: { id: string }[] = [];
  /** What the message display action's toolbar button shows, per tab. */
  const toolbar = new Map<number, { text?: string | null; color?: string | null; title?: string | null }>();
  const setOn = (tabId: number | undefined, v: object) =>
    void toolbar.set(tabId ?? -1, { ...toolbar.get(tabId ?? -1), ...v });
  const api: ThunderbirdApi = {
    messageDisplayAction: {
      setBadgeText: async ({ text, tabId }) => setOn(tabId, { text }),
      setBadgeBackgroundColor: async ({ color, tabId }) => setOn(tabId, { color }),
      setTitle: async ({ title, tabId }) => setOn(tabId, { title }),
    },
    scripting: {
      messageDisplay: {
        getRegisteredScripts: async () => [...scripts],
        registerScripts: async (list) => void scripts.push(...list),
      },
    },
    folders: {
      query: async (info) =>
        folders.filter(
          (f) =>
            (info.accountId === undefined || f.accountId === info.accountId) &&
            (info.specialUse ?? []).every((u) => f.specialUse?.includes(u)),
        ),
      onFolderInfoChanged: event('folders.onFolderInfoChanged'),
    },
    messageDisplay: {
      getDisplayedMessages: async (tabId) => {
        calls.push(`displayed:${tabId}`);
        return page(opts.displayed === undefined ? [] : [byId(opts.displayed).header]);
      },
      open: async ({ headerMessageId }) => {
        calls.push(`open:${headerMessageId}`);
        if (!mail.some((m) => m.header.headerMessageId === headerMessageId)) throw new Error('Unknown message');
        return {};
      },
      onMessagesDisplayed: event('messageDisplay.onMessagesDisplayed'),
    },
    messages: {
      get: async (id) => byId(id).header,
      getRaw: async (id, o) => {
        calls.push(`raw:${id}:${o.decrypt}`);
        return byId(id).raw;
      },
      getFull: async (id) => {
        calls.push(`full:${id}`);
        return byId(id).full ?? { decryptionStatus: 'none' };
      },
      update: async (id, props) => {
        byId(id);
        calls.push(`update:${id}:${JSON.stringify(props)}`);
        if (props.junk === undefined) return;
        junk.set(id, props.junk);
        const m = byId(id).header;
        if (m.junk === props.junk) return;
        m.junk = props.junk;
        // As Thunderbird: the change is reported to the add-on too, after the call returns.
        setImmediate(() => fire('messages.onUpdated', m, { junk: props.junk }));
      },
      move: async (ids, folderId) => {
        const to = folders.find((f) => f.id === folderId);
        if (!to) throw new Error(`Folder not found: ${folderId}`);
        const before = ids.map((id) => ({ ...byId(id).header }));
        for (const id of ids) byId(id).header.folder = to;
        calls.push(`move:${ids.join(',')}:${folderId}`);
        // Reported to the add-on as Thunderbird does (here the moved message keeps its id).
        const after = ids.map((id) => byId(id).header);
        setImmediate(() => fire('messages.onMoved', { id: null, messages: before }, { id: null, messages: after }));
      },
      query: async (info) => {
        calls.push(`query:${info.folderId ?? ''}`);
        return page(
          mail
            .map((m) => m.header)
            .filter(
              (h) =>
                (info.headerMessageId === undefined || h.headerMessageId === info.headerMessageId) &&
                (info.folderId === undefined || h.folder?.id === info.folderId) &&
                // As Thunderbird: "a date after this value".
                (info.fromDate === undefined || new Date(h.date).getTime() > info.fromDate.getTime()),
            ),
        );
      },
      continueList: async (id) => {
        const rest = pages.get(id);
        if (!rest) throw new Error(`Unknown list: ${id}`);
        return page(rest);
      },
      onNewMailReceived: event('messages.onNewMailReceived'),
      onUpdated: event('messages.onUpdated'),
      onMoved: event('messages.onMoved'),
      onDeleted: event('messages.onDeleted'),
    },
  };
  return { api, calls, listeners, junk, fire, toolbar };
}

/** A message header as Thunderbird lists it. */
export function header(id: number, over: Partial<MessageHeader> = {}): MessageHeader {
  return {
    id,
    author: 'Bob <bob@example.org>',
    subject: `m${id}`,
    date: new Date('2026-11-21T10:00:00Z'),
    recipients: ['alice@example.org'],
    headerMessageId: `m${id}@example.org`,
    ...over,
  };
}
