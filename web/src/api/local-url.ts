/**
 * A URL that names this machine (localhost, 127.x, ::1): a link made from it works only where the
 * server runs, so one handed to someone else (an invitation, a hook URL) will not reach it. The
 * server says the same of its EMEND_BASE_URL (GET /v1/me `server.base_url_local`).
 */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || /^127(?:\.\d{1,3}){3}$/.test(host) || host === '::1';
}

/** What to say beside such a link. */
export const LOCAL_URL_WARNING =
  'This address names the server’s own machine (localhost): it works only there. The operator sets EMEND_BASE_URL to the address others reach.';
