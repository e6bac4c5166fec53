// Which origin the options page asks permission for when connecting
// (private/provider-permission.ts): none for loopback (the manifests grant
// it), the provider's host on https otherwise, never with a port (Firefox
// refuses match patterns with one), and a refusal explained in plain words.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { permissionRefused, providerPermission } from '../private/provider-permission.js';

describe('provider host permission', () => {
  it('asks for the provider’s https origin, without its port; nothing for loopback', () => {
    assert.deepEqual(providerPermission('https://mail.example.org'), { origins: ['https://mail.example.org/*'] });
    assert.deepEqual(providerPermission(' https://mail.example.org:8443/x '), {
      origins: ['https://mail.example.org/*'],
    });
    for (const loopback of ['http://127.0.0.1:8080', 'https://localhost:8443', 'http://localhost'])
      assert.equal(providerPermission(loopback), undefined, loopback);
    // Not an address the background would connect to: it says why, nothing is asked.
    for (const bad of ['http://mail.example.org', 'not a url', 'ftp://mail.example.org'])
      assert.equal(providerPermission(bad), undefined, bad);
  });

  it('a refusal says what happened and what to do, in plain words', () => {
    const text = permissionRefused('https://mail.example.org:8443');
    assert.match(text, /mail\.example\.org/);
    assert.match(text, /Nothing was sent/);
    assert.match(text, /Allow/);
    assert.doesNotMatch(text, /permission(s)?\.request|origin|\/\*/);
  });
});
