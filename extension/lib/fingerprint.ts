// How fingerprints are shown, wherever they are (badge text in the background, pages).

/** "ABCD EF01 …" as OpenPGP tools print fingerprints. */
export function formatFingerprint(fp: string): string {
  return fp.replace(/(.{4})/g, '$1 ').trim();
}
