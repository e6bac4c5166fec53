// Checks a mail account's password with Dovecot's own authentication: the
// auth-client protocol (doc.dovecot.org, "Dovecot Authentication Protocol")
// on a socket of Dovecot's auth service, the one its IMAP login processes
// use. So the provider accepts exactly the passwords IMAP accepts (passdb,
// schemes, disabled accounts), gets Dovecot's canonical user name, and
// Dovecot's own failure delay and per-address penalty apply to its guesses.
// Nothing is stored or compared here; the password is sent once, as a SASL
// PLAIN response, on a Unix socket or a loopback TCP port.
//
//   → VERSION 1 2 · CPID <pid>
//   ← VERSION 1 x · MECH … · SPID · CUID · COOKIE · DONE
//   → AUTH 1 PLAIN service=<s> secured rip=<client> resp=<base64(\0user\0password)>
//   ← OK 1 user=<name> … | FAIL 1 … [temp]
import net from 'node:net';

export interface DovecotAuthOptions {
  /** An absolute socket path (e.g. /run/dovecot/auth-pmf), or host:port of a loopback inet_listener. */
  socket: string;
  /** The service name passdb rules see (default "imap": the provider accepts what IMAP accepts). */
  service: string;
  /** Covers Dovecot's failure delay and penalty (up to 15 s + 2 s by default). */
  timeoutMs: number;
}

/** Dovecot's verdict: the account's canonical user name, or wrong credentials. */
export type AuthVerdict = { user: string } | 'fail';

/** Dovecot could not give a verdict (not running, temporary failure, a broken answer): not the user's fault. */
export class AuthUnavailable extends Error {}

const MAX_LINE = 16_384;
const MAX_HANDSHAKE_LINES = 64;

/** Dovecot's tab-escaping of values: \x01 then 1, t, r, n. */
const unescape = (v: string): string =>
  // eslint-disable-next-line no-control-regex -- \x01 is the escape character itself
  v.replace(/\x01(.)/g, (_, c: string) => ({ '1': '\x01', t: '\t', r: '\r', n: '\n' })[c] ?? c);

function connect(socket: string): net.Socket {
  const tcp = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(socket);
  return tcp ? net.connect(Number(tcp[2]), tcp[1]) : net.connect(socket);
}

/** Asks Dovecot whether `user` has `password`; `remoteIp` is who asked us (Dovecot's per-address penalty). */
export function dovecotVerify(
  opts: DovecotAuthOptions,
  user: string,
  password: string,
  remoteIp: string,
): Promise<AuthVerdict> {
  return new Promise((resolve, reject) => {
    const sock = connect(opts.socket);
    let buffered = '';
    let lines = 0;
    let handshakeDone = false;
    let done = false;
    const finish = (outcome: AuthVerdict | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new AuthUnavailable('Dovecot auth did not answer in time')), opts.timeoutMs);
    const auth = () => {
      const resp = Buffer.from(`\0${user}\0${password}`, 'utf8').toString('base64');
      const rip = net.isIP(remoteIp) ? `\trip=${remoteIp}` : '';
      // secured: the password reached us over TLS or loopback (config.ts refuses anything else).
      sock.write(`AUTH\t1\tPLAIN\tservice=${opts.service}\tsecured${rip}\tresp=${resp}\n`);
    };
    const line = (l: string) => {
      const [cmd, ...args] = l.split('\t');
      if (!handshakeDone) {
        if (++lines > MAX_HANDSHAKE_LINES) return finish(new AuthUnavailable('Dovecot auth sent an endless handshake'));
        if (cmd === 'VERSION' && args[0] !== '1')
          return finish(new AuthUnavailable(`Dovecot auth speaks protocol ${args[0]}, not 1`));
        if (cmd === 'DONE') {
          handshakeDone = true;
          auth();
        }
        return;
      }
      if (args[0] !== '1') return finish(new AuthUnavailable('Dovecot auth answered another request'));
      const fields = args.slice(1);
      if (cmd === 'OK') {
        const name = fields.find((f) => f.startsWith('user='));
        return finish({ user: unescape(name ? name.slice(5) : user) });
      }
      if (cmd === 'FAIL') {
        // temp: its passdb failed (a database down), not the password.
        if (fields.includes('temp')) return finish(new AuthUnavailable('Dovecot auth failed temporarily'));
        return finish('fail');
      }
      finish(new AuthUnavailable(`Dovecot auth answered ${cmd.slice(0, 16)} to PLAIN`));
    };
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`VERSION\t1\t2\nCPID\t${process.pid}\n`));
    sock.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0 && !done; nl = buffered.indexOf('\n')) {
        const l = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        line(l);
      }
      if (buffered.length > MAX_LINE) finish(new AuthUnavailable('Dovecot auth sent an overlong line'));
    });
    sock.on('error', (e) => finish(new AuthUnavailable(`Dovecot auth is unreachable (${e.message})`)));
    sock.on('close', () => finish(new AuthUnavailable('Dovecot auth closed the connection')));
  });
}
