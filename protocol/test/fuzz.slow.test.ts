// The long fuzzing pass (slow suite): the same targets, 100 times the runs.
import { registerFuzzTargets } from './fuzz-targets.js';

await registerFuzzTargets(Number(process.env.PMF_FUZZ_RUNS ?? 20_000));
