import type { FastifyReply } from 'fastify';

/**
 * The pages the OAuth callback shows a person in a browser (a sign-in that failed, a connection
 * waiting for confirmation): small, static, no script, and never cached.
 */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>${escapeHtml(title)} · emend</title></head><body><main>${body}</main></body></html>`;

/** A sign-in that went wrong. */
export const errorPage = (message: string) =>
  page(
    'Sign-in failed',
    `<h1>Sign-in failed</h1><p>${escapeHtml(message)}</p><p><a href="/app/">Back to the control panel</a></p>`,
  );

/**
 * A connection that reached a browser other than the one that started it: the code is shown with
 * a warning first, because the way this page is abused is someone sending another person the link.
 */
export const confirmPage = (hostLabel: string, confirmation: string) =>
  page(
    'Confirm the connection',
    `<h1>One more step</h1>
<p><strong>If you did not just start connecting a ${escapeHtml(hostLabel)} account to emend yourself, close this page
and give this code to nobody:</strong> whoever asks for it is trying to reach your code through their emend account.</p>
<p>This connection was started outside this browser (from the API or the <code>emend</code> command). Nothing is
connected yet. To finish, the emend account that started it confirms with this code within 10 minutes:</p>
<p><strong><output aria-label="confirmation code">${escapeHtml(confirmation)}</output></strong></p>
<pre>curl -X POST -H "Authorization: Bearer $EMEND_TOKEN" -H 'content-type: application/json' \\
  -d '{"confirmation":"${escapeHtml(confirmation)}"}' &lt;emend server&gt;/v1/auth/scm/confirm</pre>`,
  );

/** Sends a page instead of the JSON the route's schema describes. */
export function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header(
      'content-security-policy',
      "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send(html);
}
