// A session's blocklist_request (docs/blocklist.md): the OPRF on one
// message's ITEMS_PER_MESSAGE blinded elements (its items and padding), once
// per delivered message id and within the user's daily cap, so the list
// cannot be dumped by querying. Everything is checked before the claim; the
// claim is released only if nothing left the provider.
import { ITEMS_PER_MESSAGE } from '../../protocol/blocklist.js';
import { ProtocolError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/messages.js';
import { checkElements } from './blocklist.js';
import { claimOnce, requestDigest } from './claim-once.js';
import { takeDaily, type RatedUser } from './message-rate.js';
import type { SessionDeps } from './session-deps.js';
import { windowEnd } from './store.js';

/** What lookUp needs of the session: whether it can still answer, and its crypto timer. */
export interface LookUpSession {
  open(): boolean;
  timed<T>(op: string, fn: () => Promise<T>): Promise<T>;
}

/** The evaluated elements to answer with, or undefined when the session closed meanwhile; throws the error to answer. */
export async function lookUp(
  deps: Pick<SessionDeps, 'store' | 'crypto' | 'blocklists' | 'limits' | 'metrics'>,
  userId: number,
  user: RatedUser,
  msg: Extract<Message, { name: 'blocklist_request' }>,
  session: LookUpSession,
): Promise<Uint8Array | undefined> {
  const list = deps.blocklists?.current(msg.listId);
  if (!list) throw new ProtocolError('unknown_model', `blocklist ${msg.listId} is not served here`);
  if (msg.listVersion !== list.version) {
    throw new ProtocolError(
      msg.listVersion < list.version ? 'model_outdated' : 'unknown_model',
      `blocklist ${list.id} version ${msg.listVersion} is not current; download version ${list.version}`,
    );
  }
  checkElements(msg.blinded); // exactly ITEMS_PER_MESSAGE of them: decodeMessage checked the length
  const store = deps.store;
  const request = requestDigest('blocklist', msg.messageId, msg.blinded);
  const evaluate = () => session.timed('blocklist', () => deps.crypto.blocklist(list.keyFile, msg.blinded));
  const { blocklistEvaluationsPerDay: cap, backlogAllowance } = deps.limits;
  const once = await claimOnce(
    store,
    { userId, messageId: msg.messageId, task: 'blocklist', request },
    {
      // Counted after the claim (a refused message costs nothing) and only for new evaluations: the
      // answered request below gets elements the client may already hold again, uncounted.
      charge: async () => {
        if (!(await takeDaily(store, user, 'oprf', ITEMS_PER_MESSAGE, cap, backlogAllowance * ITEMS_PER_MESSAGE)))
          throw new ProtocolError(
            'daily_limit',
            `at most ${Math.floor(cap / ITEMS_PER_MESSAGE)} link checks (${cap} OPRF evaluations) per account per day; ` +
              `try again after ${new Date(windowEnd('oprf')).toISOString()}`,
          );
      },
      work: evaluate,
      // Recorded without the bytes: a lost reply is computed again for the same request (below).
      recorded: () => null,
      open: () => session.open(),
    },
  );
  if (once === 'closed') return undefined;
  if (once === 'already_classified') {
    // The same request again (its reply lost on the way): the same blinded
    // elements get the same k·B, which may already be the client's, so they
    // are evaluated again; any other request for the message stays refused.
    if (!(await store.answered(userId, msg.messageId, 'blocklist', request)))
      throw new ProtocolError('already_classified', `message ${msg.messageId} was already looked up (blocklist)`);
    const evaluated = await evaluate();
    return session.open() ? evaluated : undefined;
  }
  deps.metrics.blocklistItems.inc({ list: list.id }, ITEMS_PER_MESSAGE);
  return once.answer;
}
