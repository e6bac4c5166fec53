// The user's security background: a pattern drawn from a random seed, in a
// colour, with a phrase the user chose. The extension shows it behind every
// status it draws (the viewer frame in webmail, the popup, the options page)
// and nowhere else, so a status without it was not drawn by the extension:
// a webmail page or a mail's HTML can imitate the badge's words and colours,
// but it does not know the pattern or the phrase. Kept in the extension's own
// IndexedDB, which web pages and content scripts cannot open; a viewer frame
// gets it from the background only together with a view it may show.
import { openDB } from 'idb';

export interface SecurityBackground {
  /** The user's words, shown in every status the extension draws ('' until chosen). */
  phrase: string;
  /** 0–359: the pattern's colour. */
  hue: number;
  /** 16 random bytes, hex: where the pattern's shapes go. */
  seed: string;
}

export const MAX_PHRASE_CHARS = 40;
const DB = 'pmf-ui';
const STORE = 'settings';
const KEY = 'security-background';

export function randomSecurityBackground(phrase = ''): SecurityBackground {
  const seed = crypto.getRandomValues(new Uint8Array(16));
  const [hue] = crypto.getRandomValues(new Uint16Array(1));
  return { phrase, hue: hue % 360, seed: [...seed].map((b) => b.toString(16).padStart(2, '0')).join('') };
}

/** Checks one read back or entered by the user; throws in plain words. */
export function validSecurityBackground(b: Partial<SecurityBackground> | undefined): SecurityBackground {
  const phrase = typeof b?.phrase === 'string' ? b.phrase.trim() : '';
  if (phrase.length > MAX_PHRASE_CHARS)
    throw new Error(`Keep your security phrase to ${MAX_PHRASE_CHARS} characters or fewer.`);
  if (!Number.isInteger(b?.hue) || b!.hue! < 0 || b!.hue! > 359 || !/^[0-9a-f]{32}$/.test(b?.seed ?? ''))
    throw new Error('The security background is damaged: choose a new pattern.');
  return { phrase, hue: b!.hue!, seed: b!.seed! };
}

const db = () => openDB(DB, 1, { upgrade: (d) => void d.createObjectStore(STORE) });

/** The user's background; a random one is made and kept the first time. */
export async function loadSecurityBackground(): Promise<SecurityBackground> {
  const d = await db();
  try {
    const stored = (await d.get(STORE, KEY)) as Partial<SecurityBackground> | undefined;
    if (stored) return validSecurityBackground(stored);
    const fresh = randomSecurityBackground();
    await d.put(STORE, fresh, KEY);
    return fresh;
  } finally {
    d.close();
  }
}

export async function saveSecurityBackground(b: SecurityBackground): Promise<void> {
  const valid = validSecurityBackground(b);
  const d = await db();
  try {
    await d.put(STORE, valid, KEY);
  } finally {
    d.close();
  }
}

/** The pattern as an SVG tile: a dozen shapes placed, sized and turned by the seed. */
export function securityPattern(b: SecurityBackground): string {
  // xorshift32 over the seed's four words: enough spread for a picture, nothing secret about the method.
  const words = b.seed.match(/.{8}/g)!.map((w) => parseInt(w, 16) >>> 0);
  let x = words.reduce((a, w) => (a ^ w) >>> 0, 0x9e3779b9) || 1;
  const next = (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
  const ink = `hsl(${b.hue} 55% 40%)`;
  const shapes: string[] = [];
  for (let i = 0; i < 12; i++) {
    const [cx, cy, r, turn] = [next(160), next(160), 8 + next(22), next(360)];
    const kind = next(3);
    const at = `transform="rotate(${turn} ${cx} ${cy})" fill="${ink}" fill-opacity="0.${2 + next(3)}"`;
    if (kind === 0) shapes.push(`<circle cx="${cx}" cy="${cy}" r="${r}" ${at}/>`);
    else if (kind === 1) shapes.push(`<rect x="${cx - r}" y="${cy - r / 2}" width="${2 * r}" height="${r}" ${at}/>`);
    else shapes.push(`<polygon points="${cx},${cy - r} ${cx + r},${cy + r} ${cx - r},${cy + r}" ${at}/>`);
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160">` +
    `<rect width="160" height="160" fill="hsl(${b.hue} 60% 95%)"/>${shapes.join('')}</svg>`
  );
}

/** Draws the background behind `el` and its phrase in `phraseEl`. */
export function paintSecurityBackground(el: HTMLElement, phraseEl: HTMLElement, b: SecurityBackground): void {
  el.style.backgroundImage = `url("data:image/svg+xml,${encodeURIComponent(securityPattern(b))}")`;
  el.dataset.securityBackground = '';
  phraseEl.textContent = b.phrase;
  phraseEl.hidden = b.phrase === '';
}
