import Database from 'better-sqlite3';
import crypto from 'node:crypto';
const db = new Database('/tmp/ri-test.db');
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL');
if (process.argv[2]) db.pragma(`cache_size = ${process.argv[2]}`);
db.exec('DROP TABLE IF EXISTS e; CREATE TABLE e (user_id INTEGER NOT NULL, addr BLOB NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (user_id, addr)) WITHOUT ROWID');
const rows = 256;
const sql = 'INSERT INTO e (user_id, addr, doc) VALUES ' + Array(rows).fill('(?,?,?)').join(',') + ' ON CONFLICT DO NOTHING';
const st = db.prepare(sql);
let doc = 1;
const t0 = performance.now();
for (let batch = 0; batch < 40; batch++) {
  const tb = performance.now();
  db.exec('BEGIN');
  for (let s = 0; s < 500; s++) {
    const params = [];
    const buf = crypto.randomBytes(16 * rows);
    for (let i = 0; i < rows; i++) params.push(1, buf.subarray(i*16, i*16+16), doc + (i >> 7));
    doc += 2;
    st.run(...params);
  }
  db.exec('COMMIT');
  if (batch % 5 === 4) console.log(`${(batch+1)*500*rows} rows, last batch ${(performance.now()-tb).toFixed(0)} ms = ${((performance.now()-tb)*1000/(500*rows)).toFixed(2)} us/row`);
}
console.log('total', ((performance.now()-t0)/1000).toFixed(1), 's');
const size = db.prepare("SELECT page_count * page_size AS b FROM pragma_page_count(), pragma_page_size()").get();
console.log('bytes/row', size.b / (40*500*rows));
// lookup speed
const q = db.prepare('SELECT doc FROM e WHERE user_id = ? AND addr = ?');
const keys = crypto.randomBytes(16*20000);
const t1 = performance.now();
for (let i = 0; i < 20000; i++) q.get(1, keys.subarray(i*16, i*16+16));
console.log('lookup miss us', ((performance.now()-t1)*1000/20000).toFixed(2));
