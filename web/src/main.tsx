import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client, setSignedOutHandler } from './api/client';
import type { Profile } from './api/types';
import { ErrorNote } from './components/ErrorNote';
import { AccountPage } from './pages/Account';
import { NewTaskPage } from './pages/NewTask';
import { SignInPage } from './pages/SignIn';
import { TaskPage } from './pages/Task';
import { TasksPage } from './pages/Tasks';
import { type Route, navigate, onLinkClick, useRoute } from './router';
import './styles.css';

function Page({ route, profile, reload }: { route: Route; profile: Profile; reload: () => void }) {
  switch (route.page) {
    case 'new':
      return <NewTaskPage profile={profile} />;
    case 'task':
      return <TaskPage id={route.id} />;
    case 'account':
      return <AccountPage profile={profile} reload={reload} />;
    default:
      return <TasksPage />;
  }
}

function App() {
  const route = useRoute();
  const [profile, setProfile] = useState<Profile | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const main = useRef<HTMLElement>(null);

  const load = () =>
    call(client.GET('/v1/me'))
      .then((p) => {
        setProfile(p);
        setError(null);
      })
      .catch((err) => {
        setProfile(null);
        if (err?.status !== 401) setError(err);
      });

  useEffect(() => {
    setSignedOutHandler(() => setProfile(null));
    void load();
  }, []);

  // A new page: move focus to its heading so keyboard and screen-reader users start there.
  useEffect(() => {
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route, profile === null]);

  const signOut = async () => {
    try {
      await call(client.DELETE('/v1/auth/session'));
    } finally {
      setProfile(null);
      navigate('/app/');
    }
  };

  if (profile === undefined)
    return (
      <main ref={main} class="loading">
        Loading…
      </main>
    );
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">emend</span>
        {profile && (
          <nav aria-label="Main">
            <a
              href="/app/"
              onClick={onLinkClick}
              aria-current={route.page === 'tasks' || route.page === 'task' ? 'page' : undefined}
            >
              Tasks
            </a>
            <a href="/app/new" onClick={onLinkClick} aria-current={route.page === 'new' ? 'page' : undefined}>
              New task
            </a>
            <a href="/app/account" onClick={onLinkClick} aria-current={route.page === 'account' ? 'page' : undefined}>
              Account
            </a>
            <span class="who">{profile.email}</span>
            <button type="button" class="link" onClick={signOut}>
              Sign out
            </button>
          </nav>
        )}
      </header>
      <main id="main" ref={main}>
        <ErrorNote error={error} />
        {profile ? <Page route={route} profile={profile} reload={load} /> : <SignInPage onSignedIn={load} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('root')!);
