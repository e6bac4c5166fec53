// Which host permission connecting to a provider needs. The manifests grant
// loopback only (the demo); any other provider's origin is an optional host
// permission (`optional_host_permissions: ["https://*/*"]`) asked for at
// connect time, from the options page's Connect click: browsers allow
// permissions.request only while handling the user's gesture, so the page
// computes it synchronously here, before anything is awaited.

/** Hosts the manifests' host_permissions already cover (any port). */
const IN_MANIFEST = new Set(['localhost', '127.0.0.1']);

/**
 * The origins to request for provider address `url`, or undefined when none
 * is needed (loopback, granted by the manifest) or the address is not one
 * the extension would connect to (the background says why). The pattern
 * names the host without its port: match patterns cover every port, and
 * Firefox refuses patterns that carry one.
 */
export function providerPermission(url: string): { origins: string[] } | undefined {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (IN_MANIFEST.has(u.hostname) || u.protocol !== 'https:') return undefined;
  return { origins: [`https://${u.hostname}/*`] };
}

/** What the page says when the user (or the browser) refused it. */
export function permissionRefused(url: string): string {
  const host = new URL(url.trim()).hostname;
  return (
    `Not connected: the extension may only talk to ${host} with your permission, and it was not given. ` +
    'Nothing was sent. Click Connect again and choose Allow to use this provider.'
  );
}
