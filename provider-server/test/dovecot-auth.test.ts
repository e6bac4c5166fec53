// The Dovecot auth-client (sign-in/dovecot-auth.ts) against a hostile auth
// server: whatever it sends, the provider gets a verdict or AuthUnavailable
// in bounded time and memory, and never takes a broken answer for "OK".
// (The real Dovecot is in sign-in.test.ts.)
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { AuthUnavailable, dovecotVerify } from '../src/sign-in/dovecot-auth.js';

const HANDSHAKE = 'VERSION\t1\t2\nMECH\tPLAIN\tplaintext\nSPID\t1\nCUID\t1\nCOOKIE\t00\nDONE\n';

/** A fake auth socket answering every AUTH line with `answer(authLine)`; what it was sent. */
async function fakeAuth(
  greeting: string,
  answer: (auth: string) => string | undefined,
): Promise<{ socket: string; seen: string[]; close(): void }> {
  const seen: string[] = [];
  const server = net.createServer((s) => {
    s.write(greeting);
    s.on('data', (b) => {
      for (const l of b.toString().split('\n').filter(Boolean)) {
        seen.push(l);
        if (l.startsWith('AUTH\t')) {
          const a = answer(l);
          if (a !== undefined) s.write(a);
        }
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    socket: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    seen,
    close: () => server.close(),
  };
}

const verify = (socket: string, timeoutMs = 2000) =>
  dovecotVerify({ socket, service: 'imap', timeoutMs }, 'alice@example.org', 'pw\tith tab', '192.0.2.1');

test('OK gives Dovecot’s user name (unescaped); the password goes once, as SASL PLAIN, with the client address', async () => {
  const f = await fakeAuth(HANDSHAKE, () => 'OK\t1\tuser=al\x01tice\n');
  try {
    assert.deepEqual(await verify(f.socket), { user: 'al\tice' });
    const auth = f.seen.find((l) => l.startsWith('AUTH'))!;
    assert.match(auth, /^AUTH\t1\tPLAIN\tservice=imap\tsecured\trip=192\.0\.2\.1\tresp=/);
    const resp = Buffer.from(auth.split('resp=')[1], 'base64').toString();
    assert.equal(resp, '\0alice@example.org\0pw\tith tab');
  } finally {
    f.close();
  }
});

test('FAIL is a wrong password; FAIL with temp, CONT, another id or protocol version are no verdict', async () => {
  for (const [greeting, answer, outcome] of [
    [HANDSHAKE, 'FAIL\t1\tuser=alice\n', 'fail'],
    [HANDSHAKE, 'FAIL\t1\ttemp\n', AuthUnavailable],
    [HANDSHAKE, 'CONT\t1\t\n', AuthUnavailable],
    [HANDSHAKE, 'OK\t2\tuser=mallory\n', AuthUnavailable],
    [HANDSHAKE.replace('VERSION\t1', 'VERSION\t2'), 'OK\t1\tuser=alice\n', AuthUnavailable],
  ] as const) {
    const f = await fakeAuth(greeting, () => answer);
    try {
      if (outcome === 'fail') assert.equal(await verify(f.socket), 'fail');
      else await assert.rejects(verify(f.socket), outcome, answer);
    } finally {
      f.close();
    }
  }
});

test('a server that never finishes, never answers, floods a line or an endless handshake: no verdict, in bounded time', async () => {
  const cases: [string, (a: string) => string | undefined][] = [
    ['VERSION\t1\t2\n', () => undefined], // no DONE: the password is never sent
    [HANDSHAKE, () => undefined],
    [HANDSHAKE, () => 'x'.repeat(1 << 20)],
    ['MECH\tPLAIN\n'.repeat(1000), () => undefined],
  ];
  for (const [greeting, answer] of cases) {
    const f = await fakeAuth(greeting, answer);
    const t0 = Date.now();
    try {
      await assert.rejects(verify(f.socket, 1500), AuthUnavailable);
      assert.ok(Date.now() - t0 < 5000);
      if (!greeting.includes('DONE')) assert.ok(!f.seen.some((l) => l.startsWith('AUTH')), 'no password sent');
    } finally {
      f.close();
    }
  }
});
