import type { ScmKindName } from '../config.js';
import type { HostKind } from './code-host.js';
import { giteaKind } from './gitea.js';
import { gitHubKind } from './github.js';
import { gitLabKind } from './gitlab.js';

/** Every kind of code host the service speaks, by the name the configuration uses. */
export const HOST_KINDS: Record<ScmKindName, HostKind> = {
  github: gitHubKind,
  gitea: giteaKind,
  gitlab: gitLabKind,
};
