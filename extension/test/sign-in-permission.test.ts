// What the options page asks permission for when connecting from a mail
// address (private/provider-permission.ts signInPermission), on the click,
// before discovery has named the provider: the mail domain and its
// subdomains, never any https host; nothing for a loopback domain; the
// provider itself once discovery named one elsewhere; nothing for an
// address that is not one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signInPermission } from '../private/provider-permission.js';

describe('sign-in host permission', () => {
  it('asks for the mail domain and its subdomains only', () => {
    assert.deepEqual(signInPermission(' alice@Example.org '), {
      origins: ['https://example.org/*', 'https://*.example.org/*'],
    });
    assert.equal(signInPermission('alice@localhost'), undefined, 'loopback: granted by the manifest');
    for (const bad of ['alice', 'alice@', 'alice@*', 'alice@*.org', 'alice@example.org/*', 'alice@org'])
      assert.equal(signInPermission(bad), undefined, bad);
  });

  it('adds the provider discovery named elsewhere, on the second click', () => {
    assert.deepEqual(signInPermission('alice@example.org', 'https://pmf.hosting.example:8443'), {
      origins: ['https://example.org/*', 'https://*.example.org/*', 'https://pmf.hosting.example/*'],
    });
    assert.deepEqual(signInPermission('alice@localhost', 'http://127.0.0.1:8787'), undefined);
  });
});
