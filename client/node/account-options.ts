// The options every client command shares: which provider, whose account, which key
// opens the mail and how the mailbox is stored. Tokens and passphrases may come from the
// environment instead, so they need not stand on the command line.
import fs from 'node:fs';
import { loadPrivateKey } from '../../mail/decrypt.js';

export const ACCOUNT_OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  key: { type: 'string' },
  passphrase: { type: 'string' },
  format: { type: 'string' },
} as const;

/** --token, else $PMF_TOKEN. */
export function bearerToken(values: { token?: string }): string | undefined {
  return values.token ?? process.env.PMF_TOKEN;
}

/** The private key in the --key file, opened with --passphrase, else $PMF_KEY_PASSPHRASE. */
export function readPrivateKey(keyFile: string, passphrase: string | undefined): ReturnType<typeof loadPrivateKey> {
  return loadPrivateKey(fs.readFileSync(keyFile, 'utf8'), passphrase ?? process.env.PMF_KEY_PASSPHRASE);
}
