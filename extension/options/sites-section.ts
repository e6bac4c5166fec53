// Options → Webmail sites: the sites the content script runs on
// (lib/webmail-sites.ts). A site other than this computer needs the user's
// host permission, asked on the Add click itself: browsers allow
// permissions.request only while handling the user's gesture, so it is the
// first thing awaited.
import browser from 'webextension-polyfill';
import { ask } from '../lib/rpc.js';
import { thunderbird } from '../thunderbird/api.js';
import { $, say, sayError } from '../lib/ui.js';
import { loadSites, sitePermission, webmailOrigin } from '../lib/webmail-sites.js';
import { t } from '../lib/i18n.js';

function show(sites: string[]): void {
  const list = $('sites');
  list.replaceChildren(
    ...sites.map((origin) => {
      const li = Object.assign(document.createElement('li'), { textContent: `${origin} ` });
      li.dataset.origin = origin;
      const remove = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Remove' });
      remove.addEventListener('click', () => void change({ remove: origin }));
      li.append(remove);
      return li;
    }),
  );
  $('sites-empty').hidden = sites.length > 0;
}

async function change(req: { add?: string; remove?: string }): Promise<void> {
  try {
    show(await ask<string[]>({ type: 'webmail-sites', ...req }));
    say($('sites-status'), req.add ? t('sites_added', req.add) : t('sites_removed'), 'ok');
  } catch (e) {
    sayError($('sites-status'), e);
  }
}

export function initSitesSection(): void {
  // Thunderbird has no webmail pages: it reads mail itself.
  if (thunderbird()) return void ($('webmail-sites').hidden = $('security').hidden = true);
  void loadSites(browser.storage.local).then(show);
  const form = $<HTMLFormElement>('site-add');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    let origin: string;
    try {
      origin = webmailOrigin(new FormData(form).get('url') as string);
    } catch (err) {
      return sayError($('sites-status'), err);
    }
    const wanted = sitePermission(origin);
    void (async () => {
      if (wanted && !(await browser.permissions.request(wanted)))
        return say(
          $('sites-status'),
          t('sites_refused', new URL(origin).host),

          'error',
        );
      await change({ add: origin });
      form.reset();
    })();
  });
}
