// What the stores check before a human looks: the files every package must
// not carry, and the Chrome Web Store's manifest rules (Mozilla's are
// addons-linter's, run by `web-ext lint`). Each function returns problems in
// plain words, empty when the package passes; the release refuses a package
// with any.
export type Files = ReadonlyMap<string, Buffer>;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG's size from its header (IHDR), or undefined for anything else. */
export function pngSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length < 24 || !data.subarray(0, 8).equals(PNG_SIGNATURE) || data.toString('latin1', 12, 16) !== 'IHDR')
    return undefined;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

/** Test files, TypeScript sources and source maps: a store package ships none. */
export function unwantedFiles(files: Files): string[] {
  const problems: string[] = [];
  for (const [name, data] of files) {
    if (/\.map$/.test(name)) problems.push(`${name}: a source map`);
    else if (/(^|\/)(tests?|__tests__)\//.test(name) || /\.(test|spec|e2e)\.[cm]?[jt]s$/.test(name))
      problems.push(`${name}: a test file`);
    else if (/\.[cm]?ts$/.test(name)) problems.push(`${name}: TypeScript source`);
    else if (/\.(js|css)$/.test(name) && /[#@] sourceMappingURL=/.test(data.toString('latin1')))
      problems.push(`${name}: points to a source map`);
  }
  return problems;
}

/** Every permission and host pattern a manifest asks for, required or optional. */
export function requestedPermissions(m: Manifest): string[] {
  return [
    ...(m.permissions ?? []),
    ...(m.optional_permissions ?? []),
    ...(m.host_permissions ?? []),
    ...(m.optional_host_permissions ?? []),
  ];
}

/**
 * The permissions extension/README.md justifies: the rows of the table under
 * its "## Permissions" heading, one permission (in backticks) per row, each
 * with the targets that ask for it and why.
 */
export function justifications(readme: string): Map<string, { targets: string[]; why: string }> {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Permissions\n')) ?? '';
  const rows = new Map<string, { targets: string[]; why: string }>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name || cells.length < 5) continue;
    rows.set(name, { targets: cells[2].split(/,\s*/).filter(Boolean), why: cells[3] });
  }
  return rows;
}

export type Justifications = ReturnType<typeof justifications>;

/**
 * Where the README's rows and the manifests disagree: a permission without a
 * row or without a reason, a row naming other builds than those that ask for
 * it, a row for something no build asks for. `askedBy`: permission → the
 * builds whose manifest asks for it.
 */
export function justificationProblems(askedBy: ReadonlyMap<string, readonly string[]>, rows: Justifications): string[] {
  const problems: string[] = [];
  for (const [p, builds] of askedBy) {
    const row = rows.get(p);
    if (!row || !row.why) problems.push(`${p}: asked for by ${builds.join(', ')}, not justified`);
    else if ([...row.targets].sort().join() !== [...builds].sort().join())
      problems.push(`${p}: the row says ${row.targets.join(', ')}, asked for by ${builds.join(', ')}`);
  }
  for (const p of rows.keys()) if (!askedBy.has(p)) problems.push(`${p}: justified, but no build asks for it`);
  return problems;
}

export interface Manifest {
  manifest_version?: unknown;
  name?: unknown;
  short_name?: unknown;
  description?: unknown;
  default_locale?: unknown;
  version?: unknown;
  icons?: Record<string, string>;
  action?: { default_popup?: string; default_icon?: Record<string, string> };
  background?: { service_worker?: string; scripts?: string[]; page?: string };
  options_ui?: { page?: string };
  content_scripts?: { js?: string[]; css?: string[] }[];
  content_security_policy?: { extension_pages?: string };
  permissions?: string[];
  optional_permissions?: string[];
  host_permissions?: string[];
  optional_host_permissions?: string[];
}

/** Chrome's version format: one to four dot-separated integers 0-65535, no leading zeros, not all zero. */
export function isChromeVersion(v: unknown): boolean {
  if (typeof v !== 'string' || !/^(0|[1-9]\d*)(\.(0|[1-9]\d*)){0,3}$/.test(v)) return false;
  const parts = v.split('.').map(Number);
  return parts.every((n) => n <= 65535) && parts.some((n) => n > 0);
}

/** Patterns that grant every site: the Web Store wants them asked for at run time, not at install. */
const ALL_SITES = new Set(['<all_urls>', '*://*/*', 'http://*/*', 'https://*/*']);
/** Permissions that open an API: asking for one the code never calls is a rejection reason. */
const API_OF: Record<string, string> = {
  alarms: 'alarms',
  offscreen: 'offscreen',
  storage: 'storage',
  scripting: 'scripting',
  tabs: 'tabs',
  notifications: 'notifications',
  contextMenus: 'contextMenus',
  downloads: 'downloads',
  cookies: 'cookies',
  history: 'history',
  bookmarks: 'bookmarks',
  webRequest: 'webRequest',
  declarativeNetRequest: 'declarativeNetRequest',
  identity: 'identity',
};
/** CSP sources a script may come from without being remote code. */
const LOCAL_SCRIPT_SOURCES = new Set(["'self'", "'wasm-unsafe-eval'", "'none'"]);

type LocaleMessages = Record<string, { message?: string } | undefined>;

/**
 * The package's languages (_locales/<lang>/messages.json): Chrome refuses a
 * package with _locales and no default_locale, or a default_locale without
 * its messages file.
 */
function localeMessages(
  files: Files,
  m: Manifest,
  bad: (why: string) => void,
): { lang: string; messages: LocaleMessages }[] {
  const locales: { lang: string; messages: LocaleMessages }[] = [];
  for (const [name, data] of files) {
    const lang = /^_locales\/([^/]+)\/messages\.json$/.exec(name)?.[1];
    if (!lang) continue;
    try {
      locales.push({ lang, messages: JSON.parse(data.toString('utf8')) as LocaleMessages });
    } catch {
      bad(`${name}: not JSON`);
    }
  }
  if (locales.length && typeof m.default_locale !== 'string') bad('default_locale: required when _locales/ is present');
  if (m.default_locale !== undefined && !locales.some((l) => l.lang === m.default_locale))
    bad(`default_locale: _locales/${String(m.default_locale)}/messages.json is missing`);
  return locales;
}

/** The Chrome Web Store's rules that a manifest and its files can break, checked on the Chromium package. */
export function chromeStoreProblems(files: Files, justified: ReadonlySet<string>): string[] {
  const raw = files.get('manifest.json');
  if (!raw) return ['manifest.json: missing from the package root'];
  let m: Manifest;
  try {
    m = JSON.parse(raw.toString('utf8')) as Manifest;
  } catch {
    return ['manifest.json: not JSON'];
  }
  const problems: string[] = [];
  const bad = (why: string) => problems.push(why);
  const text = (v: unknown) => (typeof v === 'string' ? v : '');

  if (m.manifest_version !== 3) bad('manifest_version: must be 3 (the Web Store takes no Manifest V2 item)');
  const locales = localeMessages(files, m, bad);
  // A __MSG_key__ field is as long as its message in each language.
  const texts = (v: unknown): string[] => {
    const key = /^__MSG_(\w+)__$/.exec(text(v))?.[1];
    if (!key) return [text(v)];
    // A language without the message falls back to the default one's.
    const own = locales.filter((l) => l.lang === m.default_locale || l.messages[key]);
    return own.length ? own.map((l) => l.messages[key]?.message ?? '') : [''];
  };
  const fits = (v: unknown, max: number) => texts(v).every((s) => s.length >= 1 && s.length <= max);
  if (!fits(m.name, 75)) bad('name: must be 1 to 75 characters');
  if (m.short_name !== undefined && !fits(m.short_name, 12)) bad('short_name: must be 1 to 12 characters');
  if (!fits(m.description, 132)) bad('description: must be 1 to 132 characters');
  if (!isChromeVersion(m.version)) bad(`version: "${String(m.version)}" is not 1 to 4 dot-separated numbers 0-65535`);

  if (!m.icons?.['128']) bad('icons: a 128x128 icon is required (install dialog and Web Store listing)');
  for (const [size, file] of [...Object.entries(m.icons ?? {}), ...Object.entries(m.action?.default_icon ?? {})]) {
    const data = files.get(file);
    const png = data && pngSize(data);
    if (!png) bad(`icons: ${file} is missing or not a PNG`);
    else if (png.width !== Number(size) || png.height !== Number(size))
      bad(`icons: ${file} is ${png.width}x${png.height}, the manifest says ${size}`);
  }

  if (!m.background?.service_worker || m.background.scripts || m.background.page)
    bad('background: Chrome runs Manifest V3 background code as a service_worker only');
  const named = [
    m.background?.service_worker,
    m.action?.default_popup,
    m.options_ui?.page,
    ...(m.content_scripts ?? []).flatMap((c) => [...(c.js ?? []), ...(c.css ?? [])]),
  ];
  for (const file of named)
    if (file && !files.has(file)) bad(`${file}: named in the manifest, missing from the package`);

  // No remote code: scripts come from the package, and nothing turns a string into code.
  const csp = m.content_security_policy?.extension_pages ?? '';
  for (const directive of csp.split(';').map((d) => d.trim().split(/\s+/))) {
    if (!['script-src', 'default-src', 'worker-src'].includes(directive[0])) continue;
    for (const source of directive.slice(1))
      if (!LOCAL_SCRIPT_SOURCES.has(source)) bad(`content_security_policy: ${directive[0]} allows ${source}`);
  }
  for (const [name, data] of files) {
    const body = data.toString('utf8');
    if (name.endsWith('.html')) {
      for (const tag of body.match(/<script\b[^>]*>/gi) ?? []) {
        const src = /\bsrc\s*=\s*["']?([^"'\s>]+)/i.exec(tag)?.[1];
        if (!src) bad(`${name}: an inline script (the extension CSP blocks it; the Web Store reads it as remote code)`);
        else if (/^([a-z]+:)?\/\//i.test(src) || !files.has(src.replace(/^\//, '')))
          bad(`${name}: loads ${src}, which is not in the package`);
      }
    } else if (name.endsWith('.js')) {
      if (/\beval\s*\(|\bnew\s+Function\s*\(/.test(body)) bad(`${name}: turns strings into code (eval/new Function)`);
      if (/\b(importScripts|import)\s*\(\s*["'`](https?:)?\/\//.test(body))
        bad(`${name}: loads a script from the network`);
    }
  }

  // Permissions: each justified, none unused, every site only at run time.
  const code = [...files].filter(([n]) => n.endsWith('.js')).map(([, d]) => d.toString('utf8'));
  for (const p of requestedPermissions(m)) {
    if (!justified.has(p)) bad(`permission ${p}: no justification row in extension/README.md`);
    const api = API_OF[p];
    if (api && (m.permissions ?? []).includes(p) && !code.some((c) => c.includes(`.${api}.`)))
      bad(`permission ${p}: asked for, but no script calls chrome.${api}`);
  }
  for (const p of m.host_permissions ?? [])
    if (ALL_SITES.has(p)) bad(`host_permissions: ${p} grants every site at install; ask for it at run time`);
  return problems;
}
