// The store's operations of several statements as PostgreSQL functions. On
// the shared store every statement is a round trip and a commit of its own
// (store-postgres.ts), so a classification of nine statements cost the
// provider nine times a statement's CPU and waited for nine round trips;
// one call runs the same statements, in the same order and with the same
// conditions, as one round trip and one transaction. SQLite runs the
// TypeScript steps each function mirrors (named below) as one write of its
// commit batch (SqlDriver.atomic). Changing one means changing the other;
// the tests run both (provider-server/test/store.test.ts, message-rate.test.ts).
//
// They are created (or replaced) at every start under the migration lock
// (migratePostgres): they are code, not data. A function's name carries its
// version, so instances of an older release sharing the store keep theirs
// during an upgrade; a new version takes a new name.

/**
 * The charge of a request frame naming a message (message-rate.ts,
 * chargeSteps: MessageRates.frame, takeRate, takeDaily, MessageRates.uncounted),
 * on the tables RateWindows and MessageRates name for `requests` and `messages`.
 * Returns 'ok', 'rate_limited' or 'daily_limit'; what was counted before a
 * refusal stays counted, as there.
 */
const MESSAGE_RATE = `CREATE OR REPLACE FUNCTION pmf_message_rate_v2(
  u integer, m text, salt bytea, free_frames integer,
  per_minute integer, minute_start bigint, per_day integer, day_start bigint, allowance integer
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  frames integer;
  seen boolean;
  counted boolean;
  daily boolean := false;
BEGIN
  UPDATE messages SET rate_frames = CASE WHEN rate_counted = 1 THEN rate_frames + 1 ELSE 1 END, rate_counted = 1
    WHERE user_id = u AND message_id = m RETURNING rate_frames INTO frames;
  seen := FOUND;
  counted := seen AND frames > 1;
  IF counted AND frames <= free_frames THEN RETURN 'ok'; END IF;
  IF per_minute >= 1 THEN
    INSERT INTO rate_windows AS w (user_id, window_start, count) VALUES (u, minute_start, 1)
      ON CONFLICT (user_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count + 1 <= per_minute;
  END IF;
  IF per_minute < 1 OR NOT FOUND THEN
    IF seen AND NOT counted THEN UPDATE messages SET rate_counted = 0 WHERE user_id = u AND message_id = m; END IF;
    RETURN 'rate_limited';
  END IF;
  IF NOT seen OR counted THEN RETURN 'ok'; END IF;
  IF per_day >= 1 THEN
    INSERT INTO message_windows AS w (user_id, window_start, count) VALUES (u, day_start, 1)
      ON CONFLICT (user_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count + 1 <= per_day;
    daily := FOUND;
  END IF;
  IF NOT daily AND allowance >= 1 THEN
    INSERT INTO backlog_allowance AS a (key_salt, kind, used) VALUES (salt, 'messages', 1)
      ON CONFLICT (key_salt, kind) DO UPDATE SET used = a.used + 1 WHERE a.used + 1 <= allowance;
    daily := FOUND;
  END IF;
  IF NOT daily THEN
    UPDATE messages SET rate_counted = 0 WHERE user_id = u AND message_id = m;
    RETURN 'daily_limit';
  END IF;
  RETURN 'ok';
END $$;`;

/**
 * A claim and, once claimed, its key spend (Ledger.claim, then
 * KeyEpochs.spendUserKey; a rotated key releases the claim, as claimOnce
 * does). Returns 'claimed', 'unknown_message', 'already_classified' or 'rotated'.
 */
const CLAIM_SPEND = `CREATE OR REPLACE FUNCTION pmf_claim_spend_v1(
  u integer, m text, t text, now_ms bigint, req bytea, att bytea,
  salt bytea, model text, version integer, ep integer, budget integer, n integer
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  claimed boolean := false;
  made integer;
BEGIN
  FOR tries IN 1..3 LOOP
    INSERT INTO classified (user_id, message_id, task, classified_at, request_sha256, attempt)
      SELECT u, m, t, now_ms, req, att WHERE EXISTS (SELECT 1 FROM messages WHERE user_id = u AND message_id = m)
      ON CONFLICT DO NOTHING;
    claimed := FOUND;
    EXIT WHEN claimed;
    UPDATE classified SET attempt = att, request_sha256 = req, classified_at = now_ms
      WHERE user_id = u AND message_id = m AND task = t AND attempt IS NOT NULL;
    claimed := FOUND;
    EXIT WHEN claimed;
    IF EXISTS (SELECT 1 FROM classified WHERE user_id = u AND message_id = m AND task = t AND attempt IS NULL) THEN
      RETURN 'already_classified';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM messages WHERE user_id = u AND message_id = m) THEN RETURN 'unknown_message'; END IF;
  END LOOP;
  IF NOT claimed THEN RETURN 'already_classified'; END IF;
  LOOP
    UPDATE key_epochs SET
        epoch = CASE WHEN budget - (used + n) < n THEN epoch + 1 ELSE epoch END,
        used = CASE WHEN budget - (used + n) < n THEN 0 ELSE used + n END
      WHERE key_salt = salt AND model_id = model AND model_version = version AND epoch = ep AND used + n <= budget;
    IF FOUND THEN RETURN 'claimed'; END IF;
    UPDATE key_epochs SET epoch = epoch + 1, used = 0
      WHERE key_salt = salt AND model_id = model AND model_version = version AND epoch = ep AND used + n > budget;
    EXIT WHEN FOUND;
    INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used) VALUES (salt, model, version, 1, 0)
      ON CONFLICT DO NOTHING;
    SELECT epoch INTO made FROM key_epochs WHERE key_salt = salt AND model_id = model AND model_version = version;
    EXIT WHEN made <> ep;
  END LOOP;
  DELETE FROM classified WHERE user_id = u AND message_id = m AND task = t AND attempt = att;
  RETURN 'rotated';
END $$;`;

/**
 * A claim's answer recorded, then the user's unacknowledged answers capped
 * to `keep` (Ledger.recordAnswer with keep, then Ledger.capAnswers, which
 * SQLite commits together). Returns whether the answer was recorded.
 */
const RECORD_CAP = `CREATE OR REPLACE FUNCTION pmf_record_answer_v1(
  u integer, m text, t text, att bytea, ans bytea, keep integer
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  recorded boolean;
BEGIN
  UPDATE classified SET answer = ans, attempt = NULL WHERE user_id = u AND message_id = m AND task = t AND attempt = att;
  recorded := FOUND;
  UPDATE classified SET answer = NULL
    WHERE user_id = u AND answer IS NOT NULL AND attempt IS NULL AND classified_at < (
      SELECT classified_at FROM classified WHERE user_id = u AND answer IS NOT NULL
       ORDER BY classified_at DESC LIMIT 1 OFFSET keep - 1);
  RETURN recorded;
END $$;`;

/**
 * A request frame's charge and, once charged, its claim with the key spend
 * (message-rate.ts chargeAndClaim: the two functions above in one call and
 * transaction, so an error in the claim takes the charge back with it).
 * Returns pmf_message_rate_v2's refusal or pmf_claim_spend_v1's outcome.
 */
const CHARGE_CLAIM = `CREATE OR REPLACE FUNCTION pmf_charge_claim_v2(
  u integer, m text, salt bytea, free_frames integer,
  per_minute integer, minute_start bigint, per_day integer, day_start bigint, allowance integer,
  t text, now_ms bigint, req bytea, att bytea,
  key_salt bytea, model text, version integer, ep integer, budget integer, n integer
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  charged text;
BEGIN
  charged := pmf_message_rate_v2(u, m, salt, free_frames, per_minute, minute_start, per_day, day_start, allowance);
  IF charged <> 'ok' THEN RETURN charged; END IF;
  RETURN pmf_claim_spend_v1(u, m, t, now_ms, req, att, key_salt, model, version, ep, budget, n);
END $$;`;

/** Every function of the store, created or replaced at start (migratePostgres). */
export const POSTGRES_FUNCTIONS = [MESSAGE_RATE, CLAIM_SPEND, RECORD_CAP, CHARGE_CLAIM].join('\n');
