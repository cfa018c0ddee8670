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

/**
 * The manifest flow's start: a form that posts the app's manifest to the host's "new app" page
 * (GitHub takes it only as a form post from the person's browser).
 */
export const manifestPage = (createUrl: string, manifest: object) =>
  page(
    'Create the GitHub App',
    `<h1>Create emend's GitHub App</h1>
<p>GitHub will show the app emend needs (its addresses, permissions and events) and create it on your approval.
emend then stores its credentials in its data directory and acts as the app after a restart.</p>
<form method="post" action="${escapeHtml(createUrl)}">
<input type="hidden" name="manifest" value="${escapeHtml(JSON.stringify(manifest))}">
<button type="submit">Create the app on GitHub</button>
</form>`,
  );

/** The manifest flow's end: where the credentials went, never the credentials. */
export const appCreatedPage = (slug: string, host: string, file: string) =>
  page(
    'GitHub App created',
    `<h1>The GitHub App ${escapeHtml(slug)} is created</h1>
<p>Its credentials are stored in <code>${escapeHtml(file)}</code> (readable by emend's user only). Restart emend
to act as the app on ${escapeHtml(host)}; then install it on an organisation and claim it for a workspace
(<code>GET /v1/apps/${escapeHtml(host)}/install</code>).</p>`,
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
