// The provider's only state (docs/protocol.md#provider-state: sessions are stateless apart from
// this): users and their bearer tokens (stored as SHA-256 only), the registry
// of delivered messages per user (ids and sizes; the raw, still-encrypted
// MIME only for the demo webmail, for a retention period), the
// claims on classified message ids with the recorded answer
// (docs/protocol.md#exactly-once-verdicts), the per-user rate-limit windows and
// the key epochs of each account's key salt (kept after the account is deleted). Everything several provider instances must agree on lives
// here. Small repositories over one SqlDriver (store-*.ts, tokens.ts,
// connection-gate.ts), one schema for both databases (store-schema.ts:
// store-sqlite.ts, the embedded default, and store-postgres.ts, shared by
// several instances): every statement is portable and atomic on its own, so
// no operation needs a multi-statement transaction and none can interleave
// badly across instances (the steps of a classification that take several
// statements run as one function call each on PostgreSQL, to save round
// trips, store-postgres-functions.ts, and as one write of a commit batch on
// SQLite, to save commit rounds, SqlDriver.atomic). `Store` holds the repositories and answers for
// them, so that callers name one object.
import { ConnectionWindows } from './connection-gate.js';
import { LIMIT_DEFAULTS } from './limits.js';
import { Accounts } from './store-accounts.js';
import type { SqlDriver } from './store-driver.js';
import { KeyEpochs } from './store-keys.js';
import { Ledger } from './store-ledger.js';
import { Mailbox } from './store-mailbox.js';
import { observedDriver, type StatementObserver } from './store-observer.js';
import { MessageRates, RateWindows } from './store-rates.js';
import { Topics } from './store-topics.js';
import { Tokens, type TokenKind, type TokenPolicy } from './tokens.js';

export type { Durability, SqlDriver } from './store-driver.js';
export { KEY_SALT_BYTES, newKeySalt } from './store-accounts.js';
export type { KeySpend, UserKeyState } from './store-keys.js';
export type { ClaimResult, RecordedAnswer, Task } from './store-ledger.js';
export { MESSAGE_ID_MAX, type DeliverOptions, type Folder, type MessageSummary } from './store-mailbox.js';
export { windowEnd, type RateKind } from './store-rates.js';

const DEFAULT_TOKEN_POLICY: TokenPolicy = {
  lifetimeMs: LIMIT_DEFAULTS.tokenLifetimeMs,
  perUser: LIMIT_DEFAULTS.tokensPerUser,
};

export class Store {
  /** Bearer tokens: issued, checked, listed, revoked (tokens.ts). */
  readonly tokens: Tokens;
  /** New connections per address and network, shared by instances (connection-gate.ts). */
  readonly connections: ConnectionWindows;
  /** What the per-user rate counts per delivered message and key salt (message-rate.ts). */
  readonly messageRates: MessageRates;
  readonly accounts: Accounts;
  /** Delivered messages (store-mailbox.ts). */
  readonly mailbox: Mailbox;
  /** Claims and recorded answers (store-ledger.ts). */
  readonly ledger: Ledger;
  readonly rates: RateWindows;
  /** Key epochs and their decryption budgets (store-keys.ts). */
  readonly keys: KeyEpochs;
  readonly topics: Topics;
  private observer: StatementObserver | undefined;
  private readonly db: SqlDriver;

  constructor(driver: SqlDriver) {
    // One observed driver for every statement, every repository's (observe).
    this.db = observedDriver(driver, (statement, seconds, failed) => this.observer?.(statement, seconds, failed));
    this.tokens = new Tokens(this.db);
    this.connections = new ConnectionWindows(this.db);
    this.accounts = new Accounts(this.db, this.tokens, DEFAULT_TOKEN_POLICY);
    this.mailbox = new Mailbox(this.db);
    this.rates = new RateWindows(this.db);
    this.messageRates = new MessageRates(this.db, this.rates);
    this.keys = new KeyEpochs(this.db);
    this.ledger = new Ledger(this.db, this.mailbox, this.keys);
    this.topics = new Topics(this.db);
  }

  /** Reports every statement's time and failures from now on (metrics). */
  observe(observer: StatementObserver): void {
    this.observer = observer;
  }

  schemaVersion(): Promise<number> {
    return this.db.schemaVersion();
  }

  /** The database, for a feature that keeps tables of its own (remote-index/store.ts). */
  sql(): SqlDriver {
    return this.db;
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /** A fresh bearer token for the user (tokens.ts); the policy defaults to the default limits. */
  issueToken(userId: number, kind: TokenKind = 'cli', policy: TokenPolicy = DEFAULT_TOKEN_POLICY): Promise<string> {
    return this.tokens.issue(userId, kind, policy);
  }

  revokeToken(token: string): Promise<void> {
    return this.tokens.revokeToken(token);
  }

  /** The user a live bearer token belongs to (tokens.ts), or undefined. */
  async authenticate(token: string, policy: TokenPolicy = DEFAULT_TOKEN_POLICY): Promise<number | undefined> {
    const found = await this.tokens.authenticate(token, policy);
    return typeof found === 'object' ? found.userId : undefined;
  }

  // The repositories' operations under the names every caller uses (see each repository for what they do).
  readonly probe: Accounts['probe'] = (...a) => this.accounts.probe(...a);
  readonly addUser: Accounts['addUser'] = (...a) => this.accounts.addUser(...a);
  readonly ensureUser: Accounts['ensureUser'] = (...a) => this.accounts.ensureUser(...a);
  readonly userId: Accounts['userId'] = (...a) => this.accounts.userId(...a);
  readonly deleteUser: Accounts['deleteUser'] = (...a) => this.accounts.deleteUser(...a);
  readonly deliver: Mailbox['deliver'] = (...a) => this.mailbox.deliver(...a);
  readonly listMessages: Mailbox['listMessages'] = (...a) => this.mailbox.listMessages(...a);
  readonly moveMessage: Mailbox['moveMessage'] = (...a) => this.mailbox.moveMessage(...a);
  readonly getMessage: Mailbox['getMessage'] = (...a) => this.mailbox.getMessage(...a);
  readonly pruneBodies: Mailbox['pruneBodies'] = (...a) => this.mailbox.pruneBodies(...a);
  readonly isDelivered: Mailbox['isDelivered'] = (...a) => this.mailbox.isDelivered(...a);
  readonly claim: Ledger['claim'] = (...a) => this.ledger.claim(...a);
  readonly claimAndSpend: Ledger['claimAndSpend'] = (...a) => this.ledger.claimAndSpend(...a);
  readonly recordAnswer: Ledger['recordAnswer'] = (...a) => this.ledger.recordAnswer(...a);
  readonly recordedAnswer: Ledger['recordedAnswer'] = (...a) => this.ledger.recordedAnswer(...a);
  readonly answered: Ledger['answered'] = (...a) => this.ledger.answered(...a);
  readonly acknowledge: Ledger['acknowledge'] = (...a) => this.ledger.acknowledge(...a);
  readonly pruneAnswers: Ledger['pruneAnswers'] = (...a) => this.ledger.pruneAnswers(...a);
  readonly capAnswers: Ledger['capAnswers'] = (...a) => this.ledger.capAnswers(...a);
  readonly releaseClaim: Ledger['releaseClaim'] = (...a) => this.ledger.releaseClaim(...a);
  readonly isClassified: Ledger['isClassified'] = (...a) => this.ledger.isClassified(...a);
  readonly takeRate: RateWindows['takeRate'] = (...a) => this.rates.takeRate(...a);
  readonly userKey: KeyEpochs['userKey'] = (...a) => this.keys.userKey(...a);
  readonly spendUserKey: KeyEpochs['spendUserKey'] = (...a) => this.keys.spendUserKey(...a);
  readonly recordTopic: Topics['recordTopic'] = (...a) => this.topics.recordTopic(...a);
  readonly topicOf: Topics['topicOf'] = (...a) => this.topics.topicOf(...a);
  readonly topicCounts: Topics['topicCounts'] = (...a) => this.topics.topicCounts(...a);
  readonly topicHistory: Topics['topicHistory'] = (...a) => this.topics.topicHistory(...a);
  readonly setTopicOptOut: Topics['setTopicOptOut'] = (...a) => this.topics.setTopicOptOut(...a);
  readonly topicOptOut: Topics['topicOptOut'] = (...a) => this.topics.topicOptOut(...a);
}
