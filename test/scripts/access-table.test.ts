import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, END, TEAMS_DOC, accessTable, withTable } from '../../scripts/access-table.js';
import { WORKSPACE_ROLES } from '../../src/db/access-vocabulary.js';
import { ROUTE_ACTS } from '../../src/http/route-acts.js';
import { ACTS } from '../../src/workspaces/access.js';

// Issue 33, point 5: who can see and do what, in one table, printed from the tables the gate
// itself reads, so the docs cannot say otherwise.
describe('the table of who can see and do what (docs/teams.md)', () => {
  it('is what scripts/access-table.ts makes of ACTS and ROUTE_ACTS (run it after changing either)', () => {
    const doc = readFileSync(TEAMS_DOC, 'utf8');
    expect(doc.split(BEGIN).length, 'one table').toBe(2);
    expect(doc.split(END).length).toBe(2);
    expect(doc, 'stale: run `npx tsx scripts/access-table.ts`').toBe(withTable(doc));
  });

  it('has a row per act with each role as the gate decides, and names every route but the operator’s once', () => {
    const rows = accessTable()
      .split('\n')
      .slice(2)
      .map((line) => line.split(' | '));
    expect(rows.map((r) => r[0]!.replace(/^\| \*\*|\*\*$/g, ''))).toEqual(Object.keys(ACTS));
    for (const [i, need] of Object.values(ACTS).entries()) {
      const allowed = WORKSPACE_ROLES.filter((_, j) => rows[i]![2 + j] === 'yes');
      // The roles that may: the act's own and those above it, and no other.
      expect(allowed).toEqual(WORKSPACE_ROLES.slice(0, WORKSPACE_ROLES.indexOf(need.role) + 1));
    }
    const named = [...accessTable().matchAll(/`((?:GET|POST|PUT|PATCH|DELETE) [^`]+)`/g)].map((m) => m[1]);
    const expected = Object.keys(ROUTE_ACTS)
      .filter((r) => !r.includes(' /admin/'))
      .map((r) => r.replace(' /', ' /v1/').replace(/:(\w+)/g, '{$1}'));
    expect(named.sort()).toEqual(expected.sort());
  });

  it('is where docs/security.md points for who can do what', () => {
    const security = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    expect(security).toContain('(teams.md#who-can-see-and-do-what)');
  });
});
