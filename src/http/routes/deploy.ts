import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { deployToGit } from '../../sites/deploy-git.js';
import type { ScmRepo } from '../../scm/code-host.js';
import { auditWithin } from '../audit.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, ScmHostId, Url, described } from '../schema-parts.js';

const DeployBody = Type.Object(
  {
    repo_name: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9._-]+$',
      description:
        'name of the new repository under your code-host login: 1 to 100 letters, digits, ".", "-" or "_", not "." or ".."',
    }),
    private: Type.Optional(Type.Boolean({ default: false, description: 'create a private repository' })),
    host: Type.Optional(ScmHostId('the code host to create it on (GET /v1/me lists them); default: the first')),
  },
  { additionalProperties: false, examples: [{ repo_name: 'bakery-site', private: false }] },
);

const Deployed = Type.Object({
  ok: Type.Boolean(),
  repo_url: Url({ description: "the new repository on the code host (the task's deployed_repo)" }),
  clone_url: Url({ description: 'HTTPS clone address of the new repository' }),
});

export const deployRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/tasks/:id/deploy-git',
    {
      config: { access: 'full' },
      schema: {
        tags: ['tasks'],
        operationId: 'deployTaskToGit',
        summary:
          'Push the site of a done scaffold task to a new repository under your connected code-host account (initial commit on main); may be repeated with another name',
        params: IdParams,
        body: DeployBody,
        response: {
          201: described('the new repository, with the site pushed as its first commit', Deployed),
          ...errorResponses(400, 401, 403, 404, 409, 412, 502),
        },
      },
    },
    async (request, reply) => {
      // The repository is made and pushed on the code host first; recorded in the transaction that
      // then records it on the task.
      const audit = auditWithin(deps, request, (made: ScmRepo) => ({
        action: 'task.deployed',
        targets: { task_id: request.params.id },
        detail: { repo_url: made.htmlUrl },
      }));
      const { repo } = await deployToGit(
        deps,
        caller(request).workspace,
        request.params.id,
        { repoName: request.body.repo_name, private: request.body.private ?? false, host: request.body.host },
        audit.within,
      );
      await audit.announce();
      return reply.status(201).send({ ok: true, repo_url: repo.htmlUrl, clone_url: repo.cloneUrl });
    },
  );
};
