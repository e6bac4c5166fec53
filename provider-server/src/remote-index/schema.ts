// The remote index's tables (docs/remote-search.md#provider-store), written once
// for both stores: the SQLite and PostgreSQL migrations each run this with
// their dialect's names for a byte string and a 64-bit integer.
//
//   ri_accounts  per account: the wrapped search key, the last version whose
//                documents and entries are in place (materialized), the next
//                document number, and the counts the quotas check
//   ri_log       every committed version: an update (its documents' tags, its
//                sealed delta, and its body until it is materialized) or a
//                snapshot (the sealed buckets); rows older than the latest
//                snapshot are dropped
//   ri_docs      one row per indexed message: tag (unique per account),
//                sealed sort key and sealed record
//   ri_entries   one row per (keyword, message) pair and per padding entry:
//                the address, the document it belongs to and the check
//                its device made of the two (answered with it); indexed by
//                document too, so removing a message removes its entries
//   ri_windows   requests per account and minute (Store.takeRate, kind 'index')
export type Dialect = 'sqlite' | 'postgres';

export function remoteIndexSchema(dialect: Dialect): string {
  const bytes = dialect === 'sqlite' ? 'BLOB' : 'BYTEA';
  const big = dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  // A table that is only its primary key: SQLite stores it once, without a rowid.
  const keyOnly = dialect === 'sqlite' ? ' WITHOUT ROWID' : '';
  const user = 'user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE';
  return `
CREATE TABLE ri_accounts (
  user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  wrapped_key ${bytes},
  materialized INTEGER NOT NULL DEFAULT 0,
  next_doc ${big} NOT NULL DEFAULT 1,
  docs ${big} NOT NULL DEFAULT 0,
  entries ${big} NOT NULL DEFAULT 0,
  created_at ${big} NOT NULL
);
CREATE TABLE ri_log (
  ${user},
  version INTEGER NOT NULL,
  kind INTEGER NOT NULL CHECK (kind IN (1, 2)),
  first_doc ${big} NOT NULL,
  tags ${bytes} NOT NULL,
  state ${bytes} NOT NULL,
  body ${bytes},
  created_at ${big} NOT NULL,
  PRIMARY KEY (user_id, version)
);
CREATE TABLE ri_docs (
  ${user},
  doc ${big} NOT NULL,
  tag ${bytes} NOT NULL,
  sort ${bytes} NOT NULL,
  record ${bytes} NOT NULL,
  PRIMARY KEY (user_id, doc),
  UNIQUE (user_id, tag)
);
CREATE TABLE ri_entries (
  ${user},
  addr ${bytes} NOT NULL,
  doc ${big} NOT NULL,
  chk ${bytes} NOT NULL,
  PRIMARY KEY (user_id, addr)
)${keyOnly};
CREATE INDEX ri_entries_doc ON ri_entries (user_id, doc);
CREATE TABLE ri_windows (
  user_id INTEGER NOT NULL,
  window_start ${big} NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (user_id, window_start)
);`;
}
