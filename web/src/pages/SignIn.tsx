import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../api/client';
import { ErrorNote } from '../components/ErrorNote';

/**
 * Sign-in: a token pasted once (the server trades it for an HttpOnly cookie; the field is
 * cleared and the token kept nowhere), single sign-on (the server's identity provider, or the one a
 * workspace names for an email domain: a plain navigation, the provider's page and back), GitHub
 * where configured, or a demo token for an email where
 * the operator allows demos.
 */
export function SignInPage({ onSignedIn, invited = false }: { onSignedIn: () => void; invited?: boolean }) {
  const [token, setToken] = useState('');
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [oauth, setOauth] = useState(false);
  const [sso, setSso] = useState(false);
  const [ssoEmail, setSsoEmail] = useState('');
  // Shown once the server says demos are on (an operator may turn them off: EMEND_DEMO_TOKENS).
  const [demo, setDemo] = useState(false);

  useEffect(() => {
    call(client.GET('/v1/auth/methods'))
      .then((m) => {
        setOauth(m.oauth);
        setSso(m.sso);
        setDemo(m.demo);
      })
      .catch(() => {
        setOauth(false);
        setDemo(false);
      });
  }, []);

  const signIn = async (secret: string) => {
    await call(client.POST('/v1/auth/session', { body: { token: secret } }));
    onSignedIn();
  };

  const submitToken = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const secret = token;
    setToken('');
    try {
      await signIn(secret);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  // A navigation, not a form's submission: the page's CSP (form-action 'self') would stop the
  // redirect on to the provider; the server answers with it.
  const submitSso = (e: Event) => {
    e.preventDefault();
    const email = ssoEmail.trim();
    window.location.assign(`/v1/auth/oidc/login${email ? `?email=${encodeURIComponent(email)}` : ''}`);
  };

  const submitDemo = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const demo = await call(client.POST('/v1/demo/token', { body: { email } }));
      await signIn(demo.token);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="signin">
      <h1 tabIndex={-1}>Sign in to emend</h1>
      {invited && (
        <p class="card" data-testid="invited">
          You were invited to a workspace. Sign in to the account that should join it; the invitation is shown next.
          (After signing in with GitHub, open the invitation link again.)
        </p>
      )}
      <ErrorNote error={error} />
      <form onSubmit={submitToken} aria-labelledby="token-heading" class="card">
        <h2 id="token-heading">With a token</h2>
        <label for="token">Personal access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          placeholder="tk_…"
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
        />
        <p class="hint">The token is sent once; the server keeps you signed in with a cookie this page cannot read.</p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <form onSubmit={submitSso} aria-labelledby="sso-heading" class="card">
        <h2 id="sso-heading">With single sign-on</h2>
        <label for="sso-email">Work email</label>
        <input
          id="sso-email"
          type="email"
          autocomplete="email"
          required={!sso}
          value={ssoEmail}
          onInput={(e) => setSsoEmail((e.target as HTMLInputElement).value)}
        />
        <p class="hint">
          Your organisation’s identity provider, found by your email’s domain
          {sso ? ' (leave it empty for this server’s own)' : ''}.
        </p>
        <button type="submit">Continue with single sign-on</button>
      </form>
      {oauth && (
        <div class="card">
          <h2>With GitHub</h2>
          <a class="button" href="/v1/auth/scm/login">
            Sign in with GitHub
          </a>
          <p class="hint">For accounts already connected to a GitHub user.</p>
        </div>
      )}
      {demo && (
        <form onSubmit={submitDemo} aria-labelledby="demo-heading" class="card">
          <h2 id="demo-heading">Try a demo</h2>
          <label for="demo-email">Email</label>
          <input
            id="demo-email"
            type="email"
            autocomplete="email"
            required
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
          <p class="hint">A demo runs two tasks on public repositories, up to the inspector step.</p>
          <button type="submit" disabled={busy}>
            Get a demo token and sign in
          </button>
        </form>
      )}
    </section>
  );
}
