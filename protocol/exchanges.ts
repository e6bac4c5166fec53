// Who sends each message of the session protocol, what answers it and when
// it may come (docs/protocol.md#session-states): one table that both ends
// read, as the schemas in messages.ts are one codec for both. The provider's
// session refuses what it does not allow (provider-server/src/session.ts);
// the client's waits for the answer it names (client/core/provider-session.ts).
import { SETUP_OT_FRAMES } from './limits.js';
import type { MessageName } from './messages.js';

/** What the client may send, answered by `answer` (only an error frame, if none). */
export interface ClientMessage {
  from: 'client';
  answer?: MessageName;
  /**
   * The session state it is accepted in: `awaiting_hello` (the first frame),
   * `ready` (after a welcome; before it, `unauthenticated`) or `any`.
   */
  state: 'awaiting_hello' | 'ready' | 'any';
  /**
   * Counted against the user's requestsPerMinute (announced in the welcome):
   * every frame that makes the provider compute or write. `message`: the first
   * FRAMES_PER_MESSAGE of them naming one delivered message count once
   * together (provider-server/src/message-rate.ts). `setup`: a session's first
   * SETUP_OT_FRAMES of them are paid for by its hello, later ones count as
   * units (countedAsUnit). Clients pace these so that none is refused
   * (client/core/pacer.ts).
   */
  counted?: 'unit' | 'message' | 'setup';
}

/** A row of the table: a client's message, or one only the provider sends. */
export type Exchange = ClientMessage | { from: 'provider' };

export const EXCHANGES = {
  hello: { from: 'client', answer: 'welcome', state: 'awaiting_hello' },
  ping: { from: 'client', answer: 'pong', state: 'any' },
  bye: { from: 'client', state: 'any' },
  ot: { from: 'client', answer: 'ot_reply', state: 'ready', counted: 'setup' },
  topic_setting: { from: 'client', answer: 'topic_setting_ack', state: 'ready', counted: 'unit' },
  spam_request: { from: 'client', answer: 'spam_gc', state: 'ready', counted: 'message' },
  /** A spam_request sent again after a reconnect: answered with the recorded spam_gc. */
  spam_resend: { from: 'client', answer: 'spam_gc', state: 'ready', counted: 'message' },
  spam_done: { from: 'client', state: 'ready' },
  topic_request: { from: 'client', answer: 'topic_gc', state: 'ready', counted: 'message' },
  topic_resend: { from: 'client', answer: 'topic_gc', state: 'ready', counted: 'message' },
  topic_labels: { from: 'client', answer: 'topic_ack', state: 'ready' },
  blocklist_request: { from: 'client', answer: 'blocklist_reply', state: 'ready', counted: 'message' },
  welcome: { from: 'provider' },
  ot_reply: { from: 'provider' },
  spam_gc: { from: 'provider' },
  topic_gc: { from: 'provider' },
  topic_ack: { from: 'provider' },
  topic_setting_ack: { from: 'provider' },
  blocklist_reply: { from: 'provider' },
  pong: { from: 'provider' },
  /** Answers any request instead of its answer. */
  error: { from: 'provider' },
} as const satisfies Record<MessageName, Exchange>;

type Table = typeof EXCHANGES;

/** The client's messages that get an answer of their own. */
export type Asked = { [K in MessageName]: Table[K] extends { answer: MessageName } ? K : never }[MessageName];

/** The answer to a request `K`. */
export type AnswerTo<K extends Asked> = (Table[K] & { answer: MessageName })['answer'];

export const answerTo = <K extends Asked>(name: K): AnswerTo<K> => EXCHANGES[name].answer as AnswerTo<K>;

const having = (has: (e: ClientMessage) => boolean): ReadonlySet<MessageName> =>
  new Set(
    (Object.entries(EXCHANGES) as [MessageName, Exchange][])
      .filter(([, e]) => e.from === 'client' && has(e))
      .map(([name]) => name),
  );

/** Those of them that name a delivered message and count once per message. */
export const MESSAGE_COUNTED = having((e) => e.counted === 'message');

/**
 * Which of one session's frames not naming a message count as one unit of
 * requestsPerMinute: every `unit` frame, and `setup` frames past the first
 * SETUP_OT_FRAMES (paid for by the hello). The provider charges and the
 * client paces by this one rule, each end keeping one per session.
 */
export class UnitFrames {
  private setup = 0;

  /** Whether this frame, the next of the session, counts as a unit. */
  counts(name: MessageName): boolean {
    const e: Exchange = EXCHANGES[name];
    if (e.from !== 'client' || e.counted === undefined || e.counted === 'message') return false;
    return e.counted === 'unit' || this.setup++ >= SETUP_OT_FRAMES;
  }
}
