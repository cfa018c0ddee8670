import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import {
  type RepoSettingsView,
  type SecretMeta,
  deleteRepoSecret,
  deleteRepoSettings,
  getRepoSettings,
  listRepoSecrets,
  listSettingsRepos,
  saveRepoSecret,
  updateRepoSettings,
} from '../../repos/repo-settings.js';
import { ENV_NAME, SETTINGS_LIMITS } from '../../repos/settings-rules.js';
import { MAX_ATTEMPTS } from '../../billing/attempt-limit.js';
import { caller } from '../auth.js';
import { RepoQuery, deleteForRepo, repoOfQuery } from '../repo-query.js';
import { errorResponses } from '../errors.js';
import { described } from '../schema-parts.js';
import { audited } from '../audit.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

const Command = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: SETTINGS_LIMITS.commandChars,
    description: `${what}; run with sh -c in the repository's root; null clears it`,
  });

const SecretName = Type.String({
  minLength: 1,
  maxLength: SETTINGS_LIMITS.nameChars,
  pattern: ENV_NAME.source,
  description: 'an environment variable name; the setup phase sees the secret under it',
});

const RepoSecret = Type.Object(
  { name: Type.String(), created_at: Timestamp, updated_at: Timestamp },
  { description: 'a setup-only secret: metadata only, never the value' },
);

const RepoSettings = Type.Object({
  repo: Type.String({ description: 'the repository, normalised' }),
  setup_command: Nullable(
    Type.String({ description: "run in the setup phase, after detection's install and .emend/setup" }),
  ),
  test_command: Nullable(Type.String({ description: 'the test command; before .emend/test, memory and detection' })),
  env: Type.Record(Type.String(), Type.String(), { description: 'variables for the setup and the test phase' }),
  attempts: Nullable(
    Type.Integer({
      minimum: 1,
      description: 'the fixer attempts of fix tasks on the repository that name none (docs/agent.md); null: 1',
    }),
  ),
  secrets: Type.Array(RepoSecret, { description: 'setup-only secrets, by name' }),
  updated_at: Timestamp,
});

const settingsJson = (repo: string, v: RepoSettingsView) => ({
  repo,
  setup_command: v.setupCommand,
  test_command: v.testCommand,
  env: v.env,
  attempts: v.attempts,
  secrets: v.secrets.map(secretJson),
  updated_at: v.updatedAt.toISOString(),
});

const secretJson = (s: SecretMeta) => ({
  name: s.name,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

/** Per-repository settings and setup-only secrets (docs/environments.md). */
export const repoSettingsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const repoOf = (raw: string) => repoOfQuery(deps.config, raw).url;

  app.get(
    '/me/repos',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'listRepoSettings',
        summary: 'The repositories you have settings or secrets for',
        response: {
          200: described(
            'one item per repository, by URL (lower case, as the settings are keyed)',
            Type.Array(Type.Object({ repo: Type.String(), secret_count: Type.Integer(), updated_at: Timestamp })),
          ),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) =>
      (await listSettingsRepos(deps, caller(request).workspace.id)).map((r) => ({
        repo: r.repo,
        secret_count: r.secretCount,
        updated_at: r.updatedAt.toISOString(),
      })),
  );

  app.get(
    '/me/repos/settings',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'getRepoSettings',
        summary: "A repository's settings: commands, variables, and secrets by name (never their values)",
        querystring: RepoQuery,
        response: {
          200: described('the settings', RepoSettings),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const repo = repoOf(request.query.repo);
      return settingsJson(repo, await getRepoSettings(deps, caller(request).workspace.id, repo));
    },
  );

  app.patch(
    '/me/repos/settings',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'updateRepoSettings',
        summary: "Set (or clear) a repository's setup command, test command, variables and default attempts",
        querystring: RepoQuery,
        body: Type.Object(
          {
            setup_command: Type.Optional(Nullable(Command('the setup command'))),
            test_command: Type.Optional(Nullable(Command('the test command'))),
            env: Type.Optional(
              Type.Record(Type.String(), Nullable(Type.String({ maxLength: SETTINGS_LIMITS.envValueChars })), {
                maxProperties: SETTINGS_LIMITS.envCount,
                description:
                  'variables for both phases, merged into those set before; null removes one. Names that change ' +
                  'how the sandbox or its proxy works (PATH, HOME, *PROXY*, LD_*, EMEND_*) are refused',
              }),
            ),
            attempts: Type.Optional(
              Nullable(
                Type.Integer({
                  minimum: 1,
                  maximum: MAX_ATTEMPTS,
                  description:
                    'fixer attempts for the repository’s fix tasks that name none, at most what the workspace’s ' +
                    'plan allows (free 1, pro 3, scale 5; more is a 400); null clears it',
                }),
              ),
            ),
          },
          {
            additionalProperties: false,
            description: 'fields left out keep their value',
            examples: [
              { setup_command: 'make deps', test_command: 'make test', env: { NODE_ENV: 'test' } },
              { attempts: 3 },
            ],
          },
        ),
        response: {
          200: described('the settings as stored', RepoSettings),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const repo = repoOf(request.query.repo);
      const updated = await audited(
        deps,
        request,
        (d) => updateRepoSettings(d, caller(request).workspace.id, repo, request.body),
        { action: 'settings.changed', targets: { repo }, detail: { fields: Object.keys(request.body ?? {}) } },
      );
      return settingsJson(repo, updated);
    },
  );

  deleteForRepo(app, deps, {
    url: '/me/repos/settings',
    operationId: 'deleteRepoSettings',
    summary: "Delete a repository's settings and secrets",
    answer: 'deleted',
    remove: (deps, workspaceId, repo, within) => deleteRepoSettings(deps, workspaceId, repo.url, within),
    action: 'settings.removed',
  });

  app.get(
    '/me/repos/secrets',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'listRepoSecrets',
        summary: "A repository's setup-only secrets, by name (never their values)",
        querystring: RepoQuery,
        response: {
          200: described('the secrets, by name; none while the repository has settings only', Type.Array(RepoSecret)),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) =>
      (await listRepoSecrets(deps, caller(request).workspace.id, repoOf(request.query.repo))).map(secretJson),
  );

  app.post(
    '/me/repos/secrets',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'saveRepoSecret',
        summary: 'Save (or replace) a setup-only secret, encrypted; only the setup phase sees it',
        querystring: RepoQuery,
        body: Type.Object(
          {
            name: SecretName,
            value: Type.String({
              minLength: 1,
              maxLength: SETTINGS_LIMITS.secretValueBytes,
              description: 'the secret (at most 8 KB of UTF-8); never returned',
            }),
          },
          { additionalProperties: false, examples: [{ name: 'NPM_TOKEN', value: 'npm_…' }] },
        ),
        response: {
          200: described('replaced: the secret, metadata only', RepoSecret),
          201: described('saved: the secret, metadata only', RepoSecret),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const repo = repoOf(request.query.repo);
      const { name, value } = request.body;
      // The secret's name only: never its value.
      const saved = await audited(
        deps,
        request,
        (d) => saveRepoSecret(d, caller(request).workspace.id, repo, name, value),
        {
          action: 'secret.set',
          targets: { repo, secret: name },
        },
      );
      return reply.status(saved.created ? 201 : 200).send(secretJson(saved));
    },
  );

  app.delete(
    '/me/repos/secrets/:name',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'deleteRepoSecret',
        summary: 'Delete a setup-only secret',
        params: Type.Object({ name: SecretName }),
        querystring: RepoQuery,
        response: {
          200: described('deleted', Type.Object({ deleted: Type.Boolean(), name: Type.String() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const repo = repoOf(request.query.repo);
      await audited(deps, request, (d) => deleteRepoSecret(d, caller(request).workspace.id, repo, name), {
        action: 'secret.removed',
        targets: { repo, secret: name },
      });
      return { deleted: true, name };
    },
  );
};
