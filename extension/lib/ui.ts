// Small DOM helpers shared by the extension's pages.

export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page is missing #${id}`);
  return el as T;
}

/** Shows a message in a status element; kind drives its colour. */
export function say(el: HTMLElement, text: string, kind: 'ok' | 'error' | 'info' = 'info'): void {
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : 'Unexpected error';
}

/** "ABCD EF01 …" as OpenPGP tools print fingerprints. */
export function formatFingerprint(fp: string): string {
  return fp.replace(/(.{4})/g, '$1 ').trim();
}

export function formatTime(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString();
}
