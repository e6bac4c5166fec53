// Every user-facing string by key: the browser's i18n (_locales/<lang>/messages.json,
// the UI language's file, English where it has no message). Where no extension
// API is (Node tests, the headless client, a Web Worker) the English file
// answers, with the same placeholder rules, so the text is the same as in an
// English browser.
import en from '../_locales/en/messages.json';

export type MessageKey = keyof typeof en;

interface Message {
  message: string;
  placeholders?: Record<string, { content: string }>;
}

interface I18nApi {
  getMessage(key: string, substitutions?: string[]): string;
}

function browserI18n(): I18nApi | undefined {
  const g = globalThis as { browser?: { i18n?: I18nApi }; chrome?: { i18n?: I18nApi } };
  return g.browser?.i18n ?? g.chrome?.i18n;
}

/** Chrome's and Firefox's rules: $name$ is the placeholder's content (case-insensitive name), $1…$9 in it the substitutions, $$ a dollar. */
export function fillMessage(m: Message, subs: readonly string[]): string {
  const placeholders = new Map(Object.entries(m.placeholders ?? {}).map(([k, v]) => [k.toLowerCase(), v.content]));
  return m.message.replace(/\$\$|\$([\w@]+)\$/g, (_, name?: string) =>
    name === undefined
      ? '$'
      : (placeholders.get(name.toLowerCase()) ?? '').replace(/\$([1-9])/g, (_, i: string) => subs[Number(i) - 1] ?? ''),
  );
}

/** The message `key` in the user's language, `subs` filling its placeholders in order ($1, $2, …). */
export function t(key: MessageKey, ...subs: (string | number)[]): string {
  const args = subs.map(String);
  return browserI18n()?.getMessage(key, args) || fillMessage((en as Record<string, Message>)[key], args);
}
