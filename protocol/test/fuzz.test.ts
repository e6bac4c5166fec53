// A short fuzzing pass in the default suite (fuzz-targets.ts has the targets).
import { registerFuzzTargets } from './fuzz-targets.js';

await registerFuzzTargets(Number(process.env.PMF_FUZZ_RUNS ?? 200));
