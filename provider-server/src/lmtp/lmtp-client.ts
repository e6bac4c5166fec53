// A small LMTP client (RFC 2033): one transaction per connection, one reply
// per accepted recipient after DATA. The stage relays with it to Dovecot and
// the tests deliver with it, as an MTA would. Everything is bounded: one
// deadline for the whole transaction and at most 64 KiB of pending reply text.
import net from 'node:net';

export interface Reply {
  code: number;
  text: string;
}

export interface Envelope {
  /** Reverse path without angle brackets; '' for the null sender. */
  from: string;
  to: string[];
  data: Buffer;
}

export interface LmtpTarget {
  host: string;
  port: number;
  /** The whole transaction, connect to QUIT. */
  timeoutMs: number;
}

/** The server could not be reached or broke off: nothing is known to be delivered. */
export class LmtpUnavailable extends Error {}

const MAX_REPLY_BYTES = 64 * 1024;
const ADDRESS = /^[^\s<>]{0,320}$/;

/** Dot-stuffed DATA with its terminating line (RFC 5321 §4.5.2). */
export function dataBlock(data: Buffer): Buffer {
  const text = data.toString('latin1');
  const stuffed = text.replace(/(^|\n)\./g, '$1..');
  return Buffer.from(`${stuffed}${stuffed.endsWith('\n') ? '' : '\r\n'}.\r\n`, 'latin1');
}

/** Delivers one message; returns the RCPT reply of every recipient and, for accepted ones, its DATA reply. */
export async function lmtpSend(
  target: LmtpTarget,
  env: Envelope,
): Promise<{ rcpt: Reply[]; data: (Reply | undefined)[] }> {
  for (const a of [env.from, ...env.to]) if (!ADDRESS.test(a)) throw new Error('address with spaces or brackets');
  const socket = net.connect(target.port, target.host);
  const replies = replyReader(socket);
  const timer = setTimeout(
    () => socket.destroy(new LmtpUnavailable(`no answer within ${target.timeoutMs} ms`)),
    target.timeoutMs,
  );
  const command = async (line: string | Buffer): Promise<Reply> => {
    socket.write(line);
    return replies.next();
  };
  try {
    expect(await replies.next(), 2, 'greeting');
    expect(await command('LHLO pmf-provider\r\n'), 2, 'LHLO');
    const mail = await command(`MAIL FROM:<${env.from}>\r\n`);
    // A refused sender is every recipient's answer (a 5xx stays permanent).
    if (mail.code >= 300) return { rcpt: env.to.map(() => mail), data: env.to.map(() => undefined) };
    const rcpt: Reply[] = [];
    for (const to of env.to) rcpt.push(await command(`RCPT TO:<${to}>\r\n`));
    const accepted = rcpt.filter((r) => r.code < 300).length;
    const data: (Reply | undefined)[] = rcpt.map(() => undefined);
    if (accepted > 0) {
      expect(await command('DATA\r\n'), 3, 'DATA');
      socket.write(dataBlock(env.data));
      for (const [i, r] of rcpt.entries()) if (r.code < 300) data[i] = await replies.next();
    }
    socket.end('QUIT\r\n');
    return { rcpt, data };
  } finally {
    clearTimeout(timer);
    socket.destroySoon();
  }
}

function expect(r: Reply, klass: number, step: string): void {
  if (Math.floor(r.code / 100) !== klass) throw new LmtpUnavailable(`${step} refused: ${r.code} ${r.text}`);
}

/** Reads replies in order: "250-…" lines continue one, "250 …" ends it. */
function replyReader(socket: net.Socket): { next(): Promise<Reply> } {
  let buffer = '';
  let failure: Error | undefined;
  const ready: Reply[] = [];
  const waiting: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  let lines: string[] = [];
  const fail = (e: Error) => {
    failure ??= e instanceof LmtpUnavailable ? e : new LmtpUnavailable(e.message);
    for (const w of waiting.splice(0)) w.reject(failure);
  };
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    if (buffer.length > MAX_REPLY_BYTES) return socket.destroy(new LmtpUnavailable('reply too long'));
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      const m = line.match(/^([2-5]\d\d)([ -]|$)(.*)$/);
      if (!m) return socket.destroy(new LmtpUnavailable('malformed reply'));
      lines.push(m[3]);
      if (m[2] === '-') continue;
      const reply = { code: Number(m[1]), text: lines.join('\n') };
      lines = [];
      const w = waiting.shift();
      if (w) w.resolve(reply);
      else ready.push(reply);
    }
  });
  socket.on('error', fail);
  socket.on('close', () => fail(new LmtpUnavailable('connection closed')));
  return {
    next: () =>
      new Promise<Reply>((resolve, reject) => {
        const r = ready.shift();
        if (r) resolve(r);
        else if (failure) reject(failure);
        else waiting.push({ resolve, reject });
      }),
  };
}
