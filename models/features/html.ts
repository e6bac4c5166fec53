// HTML body to text for tokenization. Comments are removed without leaving a
// gap (spammers split words with them: "vi<!-- -->agra"), script/style
// content is dropped, every other tag becomes a space, and the common
// character references are decoded. This is deliberately not a DOM parser:
// it must behave identically in the extension and in Node.

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<(script|style)\b[\s\S]*?(?:<\/\1\s*>|$)/gi, ' ')
    .replace(/<[^>]*>?/g, ' ')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});?/gi, (m, ref: string) => {
      const r = ref.toLowerCase();
      if (r[0] !== '#') return NAMED[r] ?? m;
      const cp = r[1] === 'x' ? parseInt(r.slice(2), 16) : parseInt(r.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : ' ';
    });
}
