import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../api/client';
import type { paths } from '../api/schema';
import { type Profile, type Workspace, roleAtLeast } from '../api/types';
import { ErrorNote } from '../components/ErrorNote';
import { AccessTokens } from './account/AccessTokens';
import { Sessions } from './account/Sessions';
import { CodeHost } from './account/CodeHost';
import { useInstallations } from './account/GitHubApp';
import { ModelProvider } from './account/ModelProvider';
import { ProviderKeys } from './account/ProviderKeys';
import { RepoSettings } from './account/RepoSettings';
import { TaskDefaults } from './account/TaskDefaults';
import { Webhooks } from './account/Webhooks';

type Limits = paths['/v1/tasks/limits']['get']['responses'][200]['content']['application/json'];

/**
 * The account and the workspace the session acts in: the profile and limits, then (full accounts
 * only) one's tokens, the workspace's settings sections for a maintainer or its owner (the code
 * host's connection for its owner), and the export.
 */
export function AccountPage({
  profile,
  workspaces,
  reload,
}: {
  profile: Profile;
  workspaces: Workspace[] | null;
  reload: () => void;
}) {
  const demo = profile.plan === 'demo';
  const maintains = roleAtLeast(profile.role, 'maintainer');
  const [limits, setLimits] = useState<Limits | null>(null);
  const [error, setError] = useState<unknown>(null);
  const apps = useInstallations(profile);

  useEffect(() => {
    call(client.GET('/v1/tasks/limits')).then(setLimits, setError);
  }, []);

  return (
    <section class="account">
      <h1 tabIndex={-1}>Account</h1>
      <ErrorNote error={error} />
      <div class="card">
        <h2>Profile</h2>
        <dl class="facts">
          <dt>Email</dt>
          <dd>{profile.email}</dd>
          {profile.name && (
            <>
              <dt>Name</dt>
              <dd>{profile.name}</dd>
            </>
          )}
          <dt>Workspace</dt>
          <dd>
            {profile.workspace.name}
            {profile.workspace.personal ? ' (personal)' : ''}, as {profile.role}
          </dd>
          <dt>Plan</dt>
          <dd data-testid="plan">{profile.plan}</dd>
          <dt>Credits</dt>
          <dd data-testid="credits">{profile.credits}</dd>
          {limits && (
            <>
              <dt>Tasks this month</dt>
              <dd>
                <meter
                  min={0}
                  max={limits.limits.monthly}
                  value={limits.used_this_month}
                  aria-label="Tasks used this month"
                />{' '}
                {limits.used_this_month} of {limits.limits.monthly}
                {profile.use_byok ? ' (no monthly limit with your own keys)' : ''}
              </dd>
              <dt>Limits</dt>
              <dd>
                {limits.limits.concurrent} running at once · up to {limits.limits.maxFiles} files ·{' '}
                {limits.limits.maxRetries} retries · {limits.limits.mode === 'pr' ? 'pull requests' : 'previews'}
              </dd>
            </>
          )}
        </dl>
      </div>
      {demo ? (
        <p class="card">
          This is a demo account: it can create and read tasks only. Provider keys, tokens and the code-host connection
          need a full account.
        </p>
      ) : (
        <>
          {/* First: nothing reaches a repository before a code host is connected. */}
          <CodeHost profile={profile} reload={reload} owner={profile.role === 'owner'} apps={apps} />
          {maintains ? (
            <>
              <ModelProvider profile={profile} reload={reload} />
              <ProviderKeys />
            </>
          ) : (
            <p class="card" data-testid="settings-by-role">
              This workspace’s provider keys, webhooks and repository settings are managed by its maintainers and its
              owner; your role here is {profile.role}.
            </p>
          )}
          <AccessTokens profile={profile} workspaces={workspaces} />
          <Sessions profile={profile} workspaces={workspaces} />
          {maintains && (
            <>
              <TaskDefaults profile={profile} reload={reload} />
              <Webhooks />
              {/* A claimed GitHub App installation serves its repositories without a person's connection. */}
              <RepoSettings
                connected={profile.scm_hosts.some((host) => host.login) || (apps.installations?.length ?? 0) > 0}
              />
            </>
          )}
          <div class="card">
            <h2>Training data</h2>
            <p>Your finished tasks with their plans, diffs and feedback, one JSON object per line.</p>
            <a class="button" href="/v1/me/training/export.jsonl" download="emend-training.jsonl">
              Download the export (JSON Lines)
            </a>
          </div>
        </>
      )}
    </section>
  );
}
