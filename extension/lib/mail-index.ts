// Adds decrypted mail to the local search index (extension/search).
import type { MailSource } from './messages.js';

export async function indexDecrypted(source: MailSource, text: string, subject?: string): Promise<void> {
  void source;
  void text;
  void subject;
}
