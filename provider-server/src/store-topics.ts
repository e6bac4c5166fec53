// Decoded topics (what the provider learns, docs/threat-model.md#non-negotiable-properties)
// and the users' topic opt-out (docs/protocol.md#topic-extraction).
import { first, type SqlDriver } from './store-driver.js';

export class Topics {
  constructor(private readonly db: SqlDriver) {}

  /**
   * Records the topic the provider decoded for a claimed message, once (the
   * claim makes it unique; -1 marks an evaluation that named no topic); false
   * when it was already recorded (labels decoded again after a crash).
   */
  async recordTopic(
    userId: number,
    messageId: string,
    modelId: string,
    version: number,
    topic: number,
  ): Promise<boolean> {
    const inserted = await this.db.run(
      'INSERT INTO topics (user_id, message_id, model_id, model_version, topic, recorded_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [userId, messageId, modelId, version, topic, Date.now()],
    );
    return inserted === 1;
  }

  async topicOf(userId: number, messageId: string): Promise<number | undefined> {
    const row = await first<{ topic: number }>(
      this.db,
      'SELECT topic FROM topics WHERE user_id = ? AND message_id = ? AND topic >= 0',
      [userId, messageId],
    );
    return row?.topic;
  }

  /** How many messages got each topic, per model version (what the provider's analytics see). */
  topicCounts(): Promise<{ modelId: string; version: number; topic: number; count: number }[]> {
    return this.db.all(
      'SELECT model_id AS "modelId", model_version AS "version", topic, COUNT(*) AS "count" FROM topics WHERE topic >= 0 GROUP BY model_id, model_version, topic ORDER BY model_id, model_version, "count" DESC, topic',
    );
  }

  /** One user's recorded topics, oldest first. */
  topicHistory(
    userId: number,
  ): Promise<{ messageId: string; modelId: string; version: number; topic: number; at: number }[]> {
    return this.db.all(
      'SELECT message_id AS "messageId", model_id AS "modelId", model_version AS "version", topic, recorded_at AS "at" FROM topics WHERE user_id = ? AND topic >= 0 ORDER BY recorded_at, message_id',
      [userId],
    );
  }

  /** The user's topic opt-out (docs/protocol.md#topic-extraction): visible to the provider by design. */
  async setTopicOptOut(userId: number, optOut: boolean): Promise<void> {
    await this.db.run(
      'INSERT INTO topic_settings (user_id, opted_out, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET opted_out = excluded.opted_out, updated_at = excluded.updated_at',
      [userId, optOut ? 1 : 0, Date.now()],
    );
  }

  async topicOptOut(userId: number): Promise<boolean> {
    const row = await first<{ opted_out: number }>(this.db, 'SELECT opted_out FROM topic_settings WHERE user_id = ?', [
      userId,
    ]);
    return row?.opted_out === 1;
  }
}
