import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client, setSignedOutHandler } from './api/client';
import { type Profile, type Workspace, roleAtLeast } from './api/types';
import { ErrorNote } from './components/ErrorNote';
import { WorkspaceSwitcher } from './components/WorkspaceSwitcher';
import { AccountPage } from './pages/Account';
import { AuditPage } from './pages/Audit';
import { InvitationPage } from './pages/Invitation';
import { NewTaskPage } from './pages/NewTask';
import { SignInPage } from './pages/SignIn';
import { TaskPage } from './pages/Task';
import { TasksPage } from './pages/Tasks';
import { WorkspacePage } from './pages/Workspace';
import { type Route, navigate, onLinkClick, useRoute } from './router';
import './styles.css';

function Page({
  route,
  profile,
  workspaces,
  reload,
}: {
  route: Route;
  profile: Profile;
  workspaces: Workspace[] | null;
  reload: () => Promise<void>;
}) {
  // A viewer reads the workspace's tasks; making and acting on them is a member's (the API says so too).
  const acts = roleAtLeast(profile.role, 'member');
  switch (route.page) {
    case 'new':
      return acts ? (
        <NewTaskPage profile={profile} />
      ) : (
        <section>
          <h1 tabIndex={-1}>New task</h1>
          <p class="card" data-testid="viewer-note">
            As a viewer of {profile.workspace.name} you read its tasks; a member starts them.
          </p>
        </section>
      );
    case 'task':
      return <TaskPage id={route.id} acts={acts} />;
    case 'account':
      return <AccountPage profile={profile} workspaces={workspaces} reload={reload} />;
    case 'workspace':
      return <WorkspacePage profile={profile} workspaces={workspaces} reload={reload} />;
    case 'audit':
      return roleAtLeast(profile.role, 'maintainer') ? (
        <AuditPage profile={profile} />
      ) : (
        <section>
          <h1 tabIndex={-1}>Audit log</h1>
          <p class="card">The owner and the maintainers of {profile.workspace.name} read its audit log.</p>
        </section>
      );
    case 'invitation':
      return <InvitationPage secret={route.secret} reload={reload} />;
    default:
      return <TasksPage acts={acts} />;
  }
}

function App() {
  const route = useRoute();
  const [profile, setProfile] = useState<Profile | null | undefined>(undefined);
  const [workspaces, setWorkspaces] = useState<Workspace[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const main = useRef<HTMLElement>(null);

  /** The profile (the workspace the session acts in, one's role there) and the workspaces to switch among. */
  const load = () =>
    call(client.GET('/v1/me'))
      .then(async (p) => {
        // A demo token may not list workspaces (403): it has its one and no switcher.
        const list = p.plan === 'demo' ? null : await call(client.GET('/v1/workspaces')).catch(() => null);
        setProfile(p);
        setWorkspaces(list);
        setError(null);
      })
      .catch((err) => {
        setProfile(null);
        if (err?.status !== 401) setError(err);
      });

  /** After a switch, a task of the workspace left is not found in the new one: back to the list. */
  const switched = async () => {
    if (route.page === 'task') navigate('/app/');
    await load();
  };

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
            {roleAtLeast(profile.role, 'member') && (
              <a href="/app/new" onClick={onLinkClick} aria-current={route.page === 'new' ? 'page' : undefined}>
                New task
              </a>
            )}
            <a
              href="/app/workspace"
              onClick={onLinkClick}
              aria-current={route.page === 'workspace' ? 'page' : undefined}
            >
              Workspace
            </a>
            {roleAtLeast(profile.role, 'maintainer') && (
              <a href="/app/audit" onClick={onLinkClick} aria-current={route.page === 'audit' ? 'page' : undefined}>
                Audit
              </a>
            )}
            <a href="/app/account" onClick={onLinkClick} aria-current={route.page === 'account' ? 'page' : undefined}>
              Account
            </a>
            {workspaces && (
              <WorkspaceSwitcher profile={profile} workspaces={workspaces} switched={switched} failed={setError} />
            )}
            <span class="who">{profile.email}</span>
            <button type="button" class="link" onClick={signOut}>
              Sign out
            </button>
          </nav>
        )}
      </header>
      <main id="main" ref={main}>
        <ErrorNote error={error} />
        {profile ? (
          // Keyed by the workspace: a switch mounts the page afresh, which reads the new workspace's data.
          <Page key={profile.workspace.id} route={route} profile={profile} workspaces={workspaces} reload={load} />
        ) : (
          <SignInPage onSignedIn={load} invited={route.page === 'invitation'} />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('root')!);
