// HTML part to plain text, for tokenization and for display with textContent
// (never as HTML). Comments are removed without leaving a gap (spammers split
// words with them: "vi<!-- -->agra"), script/style content is dropped, line
// breaks and block ends become newlines, every other tag a space, and
// character references are decoded. Deliberately not a DOM parser: it must
// behave identically in the extension, its workers and Node.

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<(script|style)\b[\s\S]*?(?:<\/\1\s*>|$)/gi, ' ')
    .replace(/<br\b[^>]*>?|<\/(?:p|div|li|tr|h\d)\s*>/gi, '\n')
    .replace(/<[^>]*>?/g, ' ')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});?/gi, (m, ref: string) => {
      const r = ref.toLowerCase();
      if (r[0] !== '#') return NAMED[r] ?? m;
      const cp = r[1] === 'x' ? parseInt(r.slice(2), 16) : parseInt(r.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : ' ';
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
