import { Type } from '@fastify/type-provider-typebox';
import type { Config } from '../config/config.js';
import { AppError } from '../errors.js';
import { type RepoRef, parseRepoUrl } from '../scm/urls.js';
import { Url } from './schema-parts.js';

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
