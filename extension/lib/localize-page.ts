// Import this first in a page's script: it fills the page's marked elements
// (lib/i18n-dom.ts) before anything writes text of its own into the page.
import { localize } from './i18n-dom.js';

localize();
