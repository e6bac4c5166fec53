// Worker entry: loads the task module. Under tsx it is TypeScript, and Node 20
// workers do not inherit the parent's TS loader, so tsx is registered here;
// the compiled server (npm run build:server) loads plain JavaScript.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
await import(workerData.entry);
