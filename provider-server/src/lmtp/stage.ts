// The provider's LMTP stage (MTA → this stage → Dovecot's LMTP). For each
// recipient of a message it assigns a provider message id (the journal keeps
// it across retries), stamps it into the message (stamp.ts), registers the
// stamped message for that user, then relays it to Dovecot and acknowledges
// the recipient only with Dovecot's answer.
//
// Order: register, then relay. A message in a mailbox is then always known
// to the provider; a failed relay leaves at most a registration nobody can
// see (the MTA retries under the same id). The other order could leave mail
// in a mailbox that the provider would never classify.
// Retries: the journal maps (recipient, exact bytes) to the id and whether
// Dovecot accepted it, so a retry after a crash or a lost reply is answered
// without relaying again. One window is left (as on every mail hop, RFC
// 1047): the stage died after Dovecot stored the message but before its
// reply arrived. With `storedCheck` configured the retry first asks Dovecot
// over IMAP whether it holds that id; without it the retry is relayed again,
// and both copies carry the same id, so the provider classifies them at
// most once.
import net from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { deliveryKey, type DeliveryJournal } from './journal.js';
import { LmtpUnavailable, lmtpSend } from './lmtp-client.js';
import { storeUserOf, type LmtpConfig } from './config.js';
import { StampRefused, stampProviderId } from './stamp.js';
import type { StoredCheck } from './stored-check.js';
import { createLog, type Log } from '../log.js';

/** Where stamped messages are registered (for recipients who are users of the provider). */
export interface Registry {
  register(user: string, id: string, raw: Buffer): Promise<void>;
}

export interface LmtpStage {
  port: number;
  close(): Promise<void>;
}

/** A per-recipient LMTP answer (smtp-server sends an Error's responseCode and message). */
function refusal(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

export async function startLmtpStage(deps: {
  config: LmtpConfig;
  journal: DeliveryJournal;
  registry: Registry;
  storedCheck?: StoredCheck;
  log?: Log;
}): Promise<LmtpStage> {
  const { config, journal, registry } = deps;
  const log = deps.log ?? createLog({ name: 'lmtp', write: () => undefined });
  const inFlight = new Set<string>();
  const userOf = (address: string) => storeUserOf(address, config.userName);

  async function deliverOne(from: string, to: string, raw: Buffer): Promise<string | Error> {
    const key = deliveryKey(to, raw);
    const hex = key.toString('hex');
    if (inFlight.has(hex)) return refusal(451, '4.4.0 the same message is being delivered now; try again later');
    inFlight.add(hex);
    try {
      const entry = journal.begin(key);
      if (entry.relayed) return `2.0.0 ${entry.id} delivered before`;
      if (!entry.fresh && deps.storedCheck && (await deps.storedCheck(userOf(to), entry.id))) {
        journal.markRelayed(key);
        return `2.0.0 ${entry.id} delivered before`;
      }
      let stamped: Buffer;
      try {
        stamped = stampProviderId(raw, entry.id);
      } catch (e) {
        if (!(e instanceof StampRefused)) throw e;
        journal.forget(key);
        return refusal(554, `5.6.0 ${e.message}`);
      }
      await registry.register(userOf(to), entry.id, stamped);
      const { rcpt, data } = await lmtpSend(config.relay, { from, to: [to], data: stamped });
      const answer = data[0] ?? rcpt[0];
      if (answer.code < 300) {
        journal.markRelayed(key);
        log(`delivered ${entry.id}`);
        return `2.0.0 ${entry.id} delivered`;
      }
      if (answer.code >= 500) journal.forget(key);
      return refusal(answer.code, answer.text);
    } catch (e) {
      if (!(e instanceof LmtpUnavailable))
        log.failed('lmtp_delivery_failed', `delivery failed: ${(e as Error).message}`, { level: 'error' });
      else log.failed('lmtp_store_unavailable', 'delivery deferred: the mail store is not available');
      return refusal(451, '4.4.0 the mail store is not available; try again later');
    } finally {
      inFlight.delete(hex);
    }
  }

  async function onData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<(string | Error)[]> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes <= config.maxMessageBytes) chunks.push(chunk); // past the limit it is refused: stop keeping it
    }
    if (stream.sizeExceeded || bytes > config.maxMessageBytes)
      return session.envelope.rcptTo.map(() =>
        refusal(552, `5.3.4 messages are limited to ${config.maxMessageBytes} bytes`),
      );
    const raw = Buffer.concat(chunks);
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const answers: (string | Error)[] = [];
    for (const rcpt of session.envelope.rcptTo) answers.push(await deliverOne(from, rcpt.address, raw));
    return answers;
  }

  const server = new SMTPServer({
    lmtp: true,
    name: 'pmf-provider',
    banner: 'private mail functions LMTP stage',
    size: config.maxMessageBytes,
    maxClients: config.maxConnections,
    socketTimeout: config.timeoutMs,
    closeTimeout: 1_000,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onRcptTo(_address, session, callback) {
      if (session.envelope.rcptTo.length >= config.maxRecipients)
        return callback(refusal(452, `4.5.3 at most ${config.maxRecipients} recipients per message`));
      callback();
    },
    onData(stream, session, callback) {
      onData(stream, session).then(
        // smtp-server takes one answer per recipient in LMTP mode; its types only know the SMTP string.
        (answers) => callback(null, answers as unknown as string),
        () => callback(refusal(451, '4.3.0 the message could not be read; try again later')),
      );
    },
  });
  server.on('error', (e) => log.error(`LMTP: ${e.message}`));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.server.address() as net.AddressInfo).port;
  const pruner = setInterval(() => journal.prune(), 3600_000).unref();
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(pruner);
        server.close(() => resolve());
      }),
  };
}
