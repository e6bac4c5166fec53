// The topic replay log (topic-replay.ts) in a file, for the CLI: one JSON
// entry per line, appended and fsynced before the email's ciphertexts leave.
import fs from 'node:fs';
import path from 'node:path';
import type { ReplayEntry, ReplayStore } from '../core/topic-replay.js';

export class FileReplayStore implements ReplayStore {
  constructor(private readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }

  async load(): Promise<ReplayEntry[]> {
    if (!fs.existsSync(this.file)) return [];
    return fs
      .readFileSync(this.file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l, i) => {
        const e = JSON.parse(l) as ReplayEntry;
        if (typeof e?.messageId !== 'string' || !/^[0-9a-f]{64}$/.test(String(e.contentHash)))
          throw new Error(`${this.file}:${i + 1}: not a topic replay entry; restore the file from a backup`);
        return e;
      });
  }

  async append(entry: ReplayEntry): Promise<void> {
    const fd = fs.openSync(this.file, 'a', 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify(entry)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}
