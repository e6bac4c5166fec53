// The witness policy a release builds in (protocol/witness-policy.ts's
// DEFAULT_WITNESS_POLICY). A store package must name witnesses and a quorum
// of at least one: with none, a new device believes whatever package log the
// provider shows it. Only a build marked as a development build may leave
// the policy empty.
import fs from 'node:fs';
import { parseWitnessPolicy, type WitnessPolicy } from '../../protocol/witness-policy.js';

export class PolicyRefused extends Error {}

/**
 * The policy in `file` as the build will hold it (checked, normalized JSON),
 * or undefined for a development build without one.
 */
export function releasePolicy(file: string | undefined, dev: boolean): string | undefined {
  if (file === undefined) {
    if (dev) return undefined;
    throw new PolicyRefused(
      'a store package names the witnesses its package-log check trusts: ' +
        '`npm run release -- --witness-policy FILE` (see scripts/release/README.md), ' +
        'or `npm run release -- --dev` for a development build with none',
    );
  }
  let policy: WitnessPolicy;
  try {
    policy = parseWitnessPolicy(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (e) {
    throw new PolicyRefused(`${file}: ${(e as Error).message}`);
  }
  if (policy.quorum === 0 && !dev)
    throw new PolicyRefused(`${file}: a quorum of 0 turns the witness check off; a store package needs at least 1`);
  return `${JSON.stringify(policy, null, 2)}\n`;
}
