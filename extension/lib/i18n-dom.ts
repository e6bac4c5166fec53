// Fills an extension page's marked elements with their messages in the user's
// language.
//   data-i18n="key"            the element's text; an element with child elements
//                              (an input in a label, a link in a sentence) keeps
//                              them, placed where the message has $1, $2, … (in
//                              document order), so a language may reorder them
//   data-i18n-placeholder, data-i18n-title, data-i18n-aria-label="key"
//                              that attribute
// The page's own text is the English one, so it reads right even before this runs.
import { t, type MessageKey } from './i18n.js';

const ATTRIBUTES = ['placeholder', 'title', 'aria-label'] as const;
/** Stands for child element i while the message is split around it: private-use characters no message has. */
const marker = (i: number) => `\uE000${i}\uE001`;

/** Sets `el`'s text to the message `key`, its child elements kept where the message places them. */
export function fillElement(el: Element, key: MessageKey): void {
  const children = [...el.children];
  const text = t(key, ...children.map((_, i) => marker(i)));
  const parts = text.split(/\uE000(\d+)\uE001/);
  // split() alternates text and captured child indexes: each child must be placed once.
  const placed = parts.filter((_, i) => i % 2 === 1).map(Number);
  if (placed.length !== children.length || new Set(placed).size !== children.length) {
    console.error(`i18n: the message ${key} places ${placed.length} of the ${children.length} elements in it`);
    return;
  }
  el.replaceChildren(...parts.map((p, i) => (i % 2 === 1 ? children[Number(p)] : p)));
}

/** Every marked element under `root`, and the page's language. */
export function localize(root: ParentNode = document): void {
  for (const el of root.querySelectorAll('[data-i18n]')) fillElement(el, el.getAttribute('data-i18n') as MessageKey);
  for (const attr of ATTRIBUTES)
    for (const el of root.querySelectorAll(`[data-i18n-${attr}]`))
      el.setAttribute(attr, t(el.getAttribute(`data-i18n-${attr}`) as MessageKey));
  document.documentElement.lang = t('lang');
}
