import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HOST_KINDS_FILE, hostKindsModule } from '../../scripts/host-kinds.js';
import { SCM_KINDS } from '../../src/config/scm-hosts.js';
import { hostLabel } from '../../src/scm/hosts.js';
import { HOST_KINDS } from '../../src/scm/kinds.js';

// Issue 29, point 4: one table of code-host kinds (src/scm/kinds.ts, each kind's HostKind in its
// folder) for the API's messages, the panel and the docs.
describe('the code-host kinds, one table', () => {
  it('has a HostKind for every configurable kind, under its own name', () => {
    expect(Object.keys(HOST_KINDS).sort()).toEqual([...SCM_KINDS].sort());
    for (const [name, kind] of Object.entries(HOST_KINDS)) expect(kind.kind).toBe(name);
  });

  it('gives the panel its product names: web/src/api/host-kinds.ts is generated from it (npm run openapi)', () => {
    expect(readFileSync(HOST_KINDS_FILE, 'utf8')).toBe(hostKindsModule());
  });

  it('labels a host by its product, with its id when that is not the kind', () => {
    const host = { id: 'gitlab', webUrl: 'https://gitlab.com', apiUrl: 'https://gitlab.com/api/v4' };
    expect(hostLabel({ ...host, kind: HOST_KINDS.gitlab })).toBe('GitLab');
    expect(hostLabel({ ...host, id: 'work', kind: HOST_KINDS.gitlab })).toBe('GitLab (work)');
  });

  it("is what docs/code-host.md's token table names", () => {
    const doc = readFileSync(new URL('../../docs/code-host.md', import.meta.url), 'utf8');
    for (const kind of Object.values(HOST_KINDS)) expect(doc).toMatch(new RegExp(`^\\| ${kind.productName}\\b`, 'm'));
  });
});
