// The package log in the extension: the witness policy the user sets is
// checked and kept in IndexedDB (a bad one is refused and nothing changes), the
// options page's state names the head, the witnesses that confirmed it and
// when it was checked, and a log the witnesses have not confirmed reads as a
// passing condition, apart from a log that does not vouch for the package.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PackageLogAlert } from '../../client/core/package-log.js';
import { ProtocolError } from '../../protocol/errors.js';
import { DEFAULT_WITNESS_POLICY } from '../../protocol/witness-policy.js';
import { formatVerifierKey, SIG_COSIGNATURE_V1 } from '../../protocol/signed-note.js';
import { failureText } from '../private/faults.js';
import { packageLogStatus } from '../private/log-status.js';
import { PrivateStore } from '../private/store.js';
import { toFailure } from '../private/worker-service.js';

let n = 0;
const freshStore = () => PrivateStore.open(`private-log-test-${n++}`);
const witness = (name: string, byte: number) =>
  formatVerifierKey(name, SIG_COSIGNATURE_V1, new Uint8Array(32).fill(byte));

test('the witness policy: the default until set, checked before it is kept, and back to the default', async () => {
  const store = await freshStore();
  assert.deepEqual(await store.witnessPolicyInUse(), { policy: DEFAULT_WITNESS_POLICY, isDefault: true });
  const policy = {
    quorum: 2,
    witnesses: [witness('a.example/w', 1), witness('b.example/w', 2), witness('c.example/w', 3)],
  };
  assert.deepEqual(await store.setWitnessPolicy(policy), policy);
  assert.deepEqual(await store.witnessPolicyInUse(), { policy, isDefault: false });
  await assert.rejects(
    store.setWitnessPolicy({ ...policy, quorum: 4 }),
    /quorum must be a whole number from 0 to the 3/,
  );
  await assert.rejects(store.setWitnessPolicy({ quorum: 1, witnesses: ['not a key'] }), /not a verifier key/);
  await assert.rejects(
    store.setWitnessPolicy({ quorum: 1, witnesses: [witness('a.example/w', 1), witness('a.example/w', 4)] }),
    /listed twice/,
  );
  assert.deepEqual(await store.witnessPolicy(), policy, 'a refused policy changes nothing');
  assert.deepEqual(await store.setWitnessPolicy(undefined), DEFAULT_WITNESS_POLICY);
  assert.equal((await store.witnessPolicyInUse()).isDefault, true);
});

test('the options page’s state: nothing before a check, then the head with its witnesses and the time of the check', async () => {
  const store = await freshStore();
  assert.deepEqual(await packageLogStatus(store), {
    provider: undefined,
    policy: DEFAULT_WITNESS_POLICY,
    defaultPolicy: true,
  });
  await store.setProvider({ url: 'https://mail.example.org/', token: 't' });
  const origin = 'https://mail.example.org';
  // A head recorded by the hash-chain log is not shown as the new log's.
  await store.trust.put(origin, {
    publicKey: 'ab'.repeat(32),
    keySource: 'first-use',
    size: 2,
    head: 'cd'.repeat(32),
  } as never);
  assert.equal((await packageLogStatus(store)).head, undefined);
  const cosigners = [{ name: 'a.example/w', time: 1_700_000_000 }];
  await store.trust.put(origin, {
    logKey: 'log+01020304+AQ==',
    keySource: 'first-use',
    size: 3,
    root: 'ef'.repeat(32),
    checkedAt: 1_700_000_500_000,
    cosigners,
  });
  assert.deepEqual((await packageLogStatus(store)).head, {
    size: 3,
    fingerprint: `3:${'ef'.repeat(16)}`,
    logKey: 'log+01020304+AQ==',
    keySource: 'first-use',
    checkedAt: 1_700_000_500_000,
    cosigners,
  });
});

test('a head the witnesses have not confirmed is a pause that says so; any other log alert stops the check', () => {
  const unwitnessed = toFailure(new PackageLogAlert('not_witnessed', 'cosigned by 1 of the 2'));
  assert.equal(unwitnessed.code, 'package_unwitnessed');
  assert.match(failureText(unwitnessed.code), /not enough of the independent witnesses/);
  for (const kind of ['log_forked', 'rolled_back', 'not_in_log', 'key_changed'] as const)
    assert.equal(toFailure(new PackageLogAlert(kind, 'x')).code, 'package_log', kind);
});

test("the provider's daily cap is a pause until it lifts, like its per-minute rate, not a failed check", () => {
  for (const code of ['rate_limited', 'daily_limit'] as const)
    assert.equal(toFailure(new ProtocolError(code, 'try again after 2026-01-02T00:00:00.000Z')).code, 'rate_limited');
});
