import type { ScmKindName } from '../config/scm-hosts.js';
import type { HostKind } from './code-host.js';
import { giteaKind } from './gitea/gitea.js';
import { gitHubKind } from './github/github.js';
import { gitLabKind } from './gitlab/gitlab.js';

/** Every kind of code host the service speaks, by the name the configuration uses. */
export const HOST_KINDS: Record<ScmKindName, HostKind> = {
  github: gitHubKind,
  gitea: giteaKind,
  gitlab: gitLabKind,
};
