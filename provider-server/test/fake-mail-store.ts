// A stand-in for Dovecot's LMTP (smtp-server in LMTP mode) for tests of the
// LMTP stage: it records what it stored and answers each recipient as told.
import net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface FakeMailStore {
  port: number;
  /** What it stored, in order. */
  stored: { to: string; raw: Buffer }[];
  /** How it answers a recipient: an Error with a responseCode refuses it; undefined stores it. */
  answer: (to: string) => Error | undefined;
  close(): Promise<void>;
}

export async function startFakeMailStore(): Promise<FakeMailStore> {
  const fake: FakeMailStore = { port: 0, stored: [], answer: () => undefined, close: async () => undefined };
  const server = new SMTPServer({
    lmtp: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: 64 * 1024 * 1024,
    onMailFrom(address, _session, callback) {
      callback(
        address.address === 'refused@example.org'
          ? Object.assign(new Error('5.7.1 sender refused'), { responseCode: 550 })
          : undefined,
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const results = session.envelope.rcptTo.map((r) => {
          const e = fake.answer(r.address);
          if (!e) fake.stored.push({ to: r.address, raw: Buffer.concat(chunks) });
          return e ?? 'stored';
        });
        callback(null, results as unknown as string);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.port = (server.server.address() as net.AddressInfo).port;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}
