import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
// @ts-expect-error webpack.config.js is plain JS without types
import { targetManifest } from '../../webpack.config.js';

const base = JSON.parse(fs.readFileSync(new URL('../../manifest.json', import.meta.url), 'utf8'));

describe('per-target manifests', () => {
  it('Chromium MV3: service worker, strict CSP with only wasm-unsafe-eval added, no remote code', () => {
    const m = targetManifest(base, 'chromium');
    assert.equal(m.manifest_version, 3);
    assert.deepEqual(m.background, { service_worker: 'background.js' });
    const csp: string = m.content_security_policy.extension_pages;
    assert.match(csp, /script-src 'self' 'wasm-unsafe-eval';/);
    assert.doesNotMatch(csp, /https?:|unsafe-inline|'unsafe-eval'/);
    assert.ok(m.permissions.includes('offscreen'), 'the offscreen document hosts the WASM worker');
  });

  it('no page can find the viewer by a fixed address, nor get the content script unless the user added its site', () => {
    for (const target of ['chromium', 'firefox']) {
      const m = targetManifest(base, target);
      // Chromium serves the viewer only at a per-session address; Firefox has a per-install one anyway.
      assert.deepEqual(m.web_accessible_resources, [
        { resources: ['viewer.html'], matches: base.web_accessible_resources[0].matches, use_dynamic_url: true },
      ]);
      assert.equal(m.content_scripts, undefined, `${target}: registered at run time for the added sites only`);
      assert.ok(m.permissions.includes('scripting'), target);
    }
  });

  it('Firefox MV3: event page and a gecko id', () => {
    const m = targetManifest(base, 'firefox');
    assert.deepEqual(m.background, { scripts: ['background.js'] });
    assert.match(m.browser_specific_settings.gecko.id, /@/);
    assert.ok(!m.permissions.includes('offscreen'), 'Gecko starts the worker from its background page');
  });

  it('Thunderbird: message display action, messagesRead, no web-accessible viewer, TB 128+', () => {
    const m = targetManifest(base, 'thunderbird');
    assert.equal(m.message_display_action.default_popup, 'tb-message.html');
    assert.ok(m.permissions.includes('messagesRead'));
    assert.equal(m.web_accessible_resources, undefined);
    assert.equal(new Set(m.permissions).size, m.permissions.length, 'no permission twice');
    assert.equal(m.browser_specific_settings.gecko.strict_min_version, '128.0');
    assert.equal(m.content_security_policy.extension_pages, base.content_security_policy.extension_pages);
  });

  it('every build reaches loopback by its manifest and any other provider only with the user’s permission', () => {
    for (const target of ['chromium', 'firefox', 'thunderbird']) {
      const m = targetManifest(base, target);
      assert.deepEqual(m.optional_host_permissions, ['https://*/*'], target);
      assert.ok(
        m.host_permissions.every((p: string) => /^https?:\/\/(localhost|127\.0\.0\.1)\/\*$/.test(p)),
        `${target}: granted at install for loopback only`,
      );
    }
  });

  it('does not modify the base manifest', () => {
    targetManifest(base, 'thunderbird');
    assert.deepEqual(base.background, { service_worker: 'background.js' });
  });
});
