import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { type RepoRef, parseRepoUrl } from '../scm/urls.js';
import { caller } from './auth.js';
import { errorResponses } from './errors.js';
import { Url, described } from './schema-parts.js';
import type { AuditAction } from '../audit/actions.js';
import type { Within } from '../db/client.js';
import { auditWithin } from './audit.js';

/** The `?repo=` query of the per-repository routes (settings, secrets, triggers). */
export const RepoQuery = Type.Object(
  {
    repo: Url({
      maxLength: 500,
      description: 'the repository URL, as in POST /v1/tasks (.git and case ignored)',
      examples: ['https://github.com/acme/widgets'],
    }),
  },
  { additionalProperties: false },
);

/** The repository of `?repo=`, read as the task routes read a repo_url; errors name `repo`. */
export function repoOfQuery(config: Pick<Config, 'scmHosts'>, raw: string): RepoRef {
  try {
    return parseRepoUrl(raw, config);
  } catch (err) {
    if (err instanceof AppError && err.message.startsWith('repo_url:'))
      throw new AppError(err.code, `repo:${err.message.slice('repo_url:'.length)}`);
    throw err;
  }
}

/** A DELETE of one of the caller's per-repository records, named by `?repo=`: its settings, its triggers. */
export interface RepoDelete {
  url: string;
  operationId: string;
  summary: string;
  /** What the 200 answer (`{deleted: true}`) is, in the document's words. */
  answer: string;
  /**
   * Removes it, running `within` (its audit row) in the transaction that deletes the rows; anything
   * on a code host (a trigger's webhook) goes after that has committed.
   */
  remove: (deps: Deps, workspaceId: string, repo: RepoRef, within: Within<unknown>) => Promise<void>;
  /** The audit log's name for it (src/audit/actions.ts). */
  action: AuditAction;
}

/** Registers the route. Full access: a demo token may not change what only a signed-up account keeps. */
export function deleteForRepo(app: FastifyInstance, deps: Deps, route: RepoDelete): void {
  app.withTypeProvider<TypeBoxTypeProvider>().delete(
    route.url,
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: route.operationId,
        summary: route.summary,
        querystring: RepoQuery,
        response: {
          200: described(route.answer, Type.Object({ deleted: Type.Boolean() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const repo = repoOfQuery(deps.config, request.query.repo);
      const audit = auditWithin<unknown>(deps, request, { action: route.action, targets: { repo: repo.url } });
      await route.remove(deps, caller(request).workspace.id, repo, audit.within);
      await audit.announce();
      return { deleted: true };
    },
  );
}
