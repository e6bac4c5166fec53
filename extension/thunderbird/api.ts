// The Thunderbird MailExtension APIs this add-on uses (the polyfill's types
// know only browser APIs). Every Thunderbird-only call goes through tb(), so
// this interface is the whole surface that test/tb-schema.test.ts checks
// against the schemas shipped in the installed Thunderbird's omni.ja.
export interface MessageHeader {
  id: number;
  author: string;
  subject: string;
  date: Date | string;
  recipients: string[];
  headerMessageId: string;
  /** Thunderbird's junk flag (set by its own filter, the user, or this add-on). */
  junk?: boolean;
  /** The message's size in bytes. */
  size?: number;
  /** Present with the accountsRead permission; absent for external messages. */
  folder?: MailFolder;
}
export type FolderUse = 'inbox' | 'junk';
export interface MailFolder {
  /** A MailFolderId (MV3): what messages.move takes. */
  id: string;
  accountId: string;
  specialUse?: string[];
}
export interface MessagePart {
  contentType?: string;
  /** Header name (lower case) → values; on a decrypted root part, the protected headers. */
  headers?: Record<string, string[]>;
  body?: string;
  parts?: MessagePart[];
  decryptionStatus?: 'none' | 'skipped' | 'success' | 'fail';
}
/** A page of messages; `id` continues the list (messages.continueList). */
export interface MessageList {
  id: string | null;
  messages: MessageHeader[];
}
interface TbEvent<L extends (...args: never[]) => unknown> {
  addListener(listener: L): void;
}

export interface ThunderbirdApi {
  scripting: {
    messageDisplay: {
      getRegisteredScripts(filter?: { ids?: string[] }): Promise<{ id: string }[]>;
      registerScripts(scripts: { id: string; js?: string[]; css?: string[] }[]): Promise<void>;
    };
  };
  folders: {
    /** MV3 (Thunderbird 121+): folders matching every given property (none: every folder). */
    query(info: { accountId?: string; specialUse?: FolderUse[] }): Promise<MailFolder[]>;
    /** A folder's message counts changed (mail arrived, was read, moved…). */
    onFolderInfoChanged: TbEvent<(folder: MailFolder, info: { totalMessageCount?: number }) => void>;
  };
  /** The toolbar button of the message display (the "OpenPGP status" popup): outside the message's content. */
  messageDisplayAction: {
    setTitle(details: { title: string | null; tabId?: number }): Promise<void>;
    setBadgeText(details: { text: string | null; tabId?: number }): Promise<void>;
    setBadgeBackgroundColor(details: { color: string | null; tabId?: number }): Promise<void>;
  };
  messageDisplay: {
    /** MV3: a MessageList (MV2 returned an array; getDisplayedMessage is MV2 only). */
    getDisplayedMessages(tabId: number): Promise<MessageList>;
    /** Opens a message (here: by its Message-ID) in a tab or window. */
    open(props: { headerMessageId: string; location?: 'tab' | 'window' }): Promise<unknown>;
    /** MV3: the tab and a MessageList of what it now shows. */
    onMessagesDisplayed: TbEvent<(tab: { id?: number }, displayed: MessageList) => void>;
  };
  messages: {
    get(id: number): Promise<MessageHeader>;
    getRaw(id: number, opts: { data_format: 'BinaryString'; decrypt: boolean }): Promise<string>;
    getFull(id: number, opts?: { decrypt: boolean }): Promise<MessagePart>;
    /** Here: by headerMessageId, or a folder's messages dated from fromDate on. */
    query(info: { headerMessageId?: string; folderId?: string; fromDate?: Date }): Promise<MessageList>;
    continueList(id: string): Promise<MessageList>;
    /** Needs messagesUpdate; `junk` also trains Thunderbird's own (local) junk filter. */
    update(id: number, props: { junk?: boolean }): Promise<void>;
    /** MV3: a MailFolderId; needs accountsRead and messagesMove. */
    move(ids: number[], folderId: string, opts?: { isUserAction?: boolean }): Promise<void>;
    onNewMailReceived: TbEvent<(folder: unknown, messages: MessageList) => void>;
    /** A message's properties changed (here: the junk flag, e.g. the user's "Not Junk"); only those changed are given. */
    onUpdated: TbEvent<(message: MessageHeader, changed: { junk?: boolean }) => void>;
    onMoved: TbEvent<(from: MessageList, to: MessageList) => void>;
    onDeleted: TbEvent<(messages: MessageList) => void>;
  };
}

/** The `messenger` global, present only in Thunderbird. */
export function thunderbird(): ThunderbirdApi | undefined {
  const api = (globalThis as { messenger?: ThunderbirdApi }).messenger;
  return api?.messageDisplay ? api : undefined;
}

export function tb(): ThunderbirdApi {
  const api = thunderbird();
  if (!api) throw new Error('This only works in Thunderbird.');
  return api;
}

/** Every message of a list, following continueList pages. */
export async function allMessages(api: ThunderbirdApi, first: MessageList): Promise<MessageHeader[]> {
  const out = [...first.messages];
  for (let page = first; page.id;) {
    page = await api.messages.continueList(page.id);
    for (const m of page.messages) out.push(m);
  }
  return out;
}
