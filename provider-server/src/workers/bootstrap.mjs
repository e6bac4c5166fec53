// Worker entry: registers tsx so the TypeScript task module can be imported,
// then loads it. (Node 20 workers do not inherit the parent's TS loader.)
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
