// One throwaway PostgreSQL (postgres.ts) for the tests of a describe block:
// started before its first test, stopped after its last.
import { after, before } from 'node:test';
import { startPostgres, type TestPostgres } from './postgres.js';

/** Call in a describe's body (skip it with postgresMissing()); each database() is a fresh database. */
export function suitePostgres(): Pick<TestPostgres, 'database'> {
  let cluster: TestPostgres | undefined;
  before(async () => {
    cluster = await startPostgres();
  });
  after(() => cluster?.stop());
  return { database: () => cluster!.database() };
}
