// Lists of message ids kept for later (deletions to make once the keys are
// unlocked or the provider answers) stay bounded: a sender chooses how long
// a Message-ID is, so the bound is on characters, not on ids.

/** The last distinct ids of `ids` whose lengths add up to at most `maxChars`, in their order. */
export function newestIds(ids: readonly string[], maxChars: number): string[] {
  const kept: string[] = [];
  const seen = new Set<string>();
  let chars = 0;
  for (let i = ids.length - 1; i >= 0; i--) {
    const id = ids[i];
    if (seen.has(id)) continue;
    seen.add(id);
    if ((chars += id.length) > maxChars) break;
    kept.push(id);
  }
  return kept.reverse();
}
