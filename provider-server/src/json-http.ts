// JSON answers and bounded request bodies for the provider's small HTTP
// endpoints (admin, webmail tokens, sign-in).
import type http from 'node:http';

/** A JSON answer that no cache keeps. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * The request body as text, or undefined once it passes `maxBytes`: reading
 * stops there, and the caller answers with `connection: close`.
 */
export function readBody(req: http.IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        req.pause();
        return resolve(undefined);
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
