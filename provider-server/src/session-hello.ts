// A session's hello (docs/protocol.md#session-states): the bearer token, the
// per-user hello rate, the model version the client holds, and the user key
// its ciphertexts will be switched to; what the welcome tells the client.
import { ProtocolError } from '../../protocol/errors.js';
import type { Message, Messages } from '../../protocol/messages.js';
import type { UserKeyId } from '../../wasm/ts/he.js';
import type { ServedModel } from './crypto.js';
import type { SessionDeps } from './session-deps.js';

export interface Greeted {
  userId: number;
  model: ServedModel;
  userKey: UserKeyId;
  /** The welcome frame but its session id. */
  welcome: Omit<Messages['welcome'], 'sessionId'>;
}

/** Checks a hello and makes the session's keys; throws the error that ends the session. */
export async function greet(
  deps: Pick<SessionDeps, 'store' | 'crypto' | 'currentModel' | 'limits'>,
  msg: Extract<Message, { name: 'hello' }>,
  timed: <T>(op: string, fn: () => Promise<T>) => Promise<T>,
): Promise<Greeted> {
  const found = await deps.store.tokens.authenticate(msg.token, {
    lifetimeMs: deps.limits.tokenLifetimeMs,
  });
  if (found === 'expired')
    throw new ProtocolError('unauthenticated', 'the bearer token expired unused: connect again for a new one');
  if (found === 'unknown') throw new ProtocolError('unauthenticated', 'the bearer token is not valid (or was revoked)');
  const { userId } = found;
  // Each hello costs a public key (and maybe a KSK): bounded per user, across instances (the store counts).
  if (!(await deps.store.takeRate(userId, deps.limits.hellosPerMinute, Date.now(), 'hello'))) {
    throw new ProtocolError('rate_limited', `at most ${deps.limits.hellosPerMinute} sessions per minute`);
  }
  const model = deps.currentModel(msg.modelId);
  if (!model) throw new ProtocolError('unknown_model', `model ${msg.modelId} is not served here`);
  if (msg.modelVersion < model.version) {
    throw new ProtocolError(
      'model_outdated',
      `model ${model.id} version ${msg.modelVersion} is outdated; download version ${model.version}`,
    );
  }
  if (msg.modelVersion > model.version) {
    throw new ProtocolError(
      'unknown_model',
      `model ${model.id} version ${msg.modelVersion} does not exist (current: ${model.version})`,
    );
  }
  const p0 = await timed('public_key', () => deps.crypto.publicKey(model, msg.clientNonce));
  const key = await deps.store.userKey(userId, model.id, model.version);
  if (!key) throw new ProtocolError('unauthenticated', 'this account no longer exists');
  // A copy of its own: a Buffer is a view of Node's shared 8 KiB pool, and
  // every email's task would post the whole pool to the crypto worker.
  const userKey = { salt: new Uint8Array(key.salt), epoch: key.epoch };
  const ksk =
    msg.keyEpoch === key.epoch ? new Uint8Array(0) : await timed('ksk', () => deps.crypto.keySwitchKey(model, userKey));
  return {
    userId,
    model,
    userKey,
    welcome: {
      modelVersion: model.version,
      packageSha256: Buffer.from(model.packageSha256, 'hex'),
      candidatesSha256: Buffer.from(model.topics?.candidatesSha256 ?? '', 'hex'),
      p0,
      keyEpoch: key.epoch,
      ksk,
      keyBudget: deps.limits.userKeyBudget - key.used,
      maxFrameBytes: deps.limits.maxFrameBytes,
      requestsPerMinute: deps.limits.requestsPerMinute,
    },
  };
}
