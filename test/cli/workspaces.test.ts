import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invitationSecret } from '../../src/cli/remote/workspaces.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { killRemotes, remoteEnv, removeConfigDirs, runRemote } from './remote-process.js';

// `emend workspaces …` as users run it: processes against the service on a real port, each
// command acting in the workspace of the token it is given.
let h: Harness;
let url: string;

beforeAll(async () => {
  h = await startHarness();
  url = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await killRemotes();
  await h?.close();
  removeConfigDirs();
});

/** `emend ARGS` with this token (stdin: `input`). */
const as =
  (token: string) =>
  (args: string[], input = '') =>
    runRemote(args, remoteEnv({ server: url, token }), input);

/** The secret a `tokens create` printed (stdout is the secret alone). */
async function tokenFor(run: ReturnType<typeof as>, args: string[]): Promise<string> {
  const made = await run(['tokens', 'create', ...args]);
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout).toMatch(/^tk_\S+\n$/);
  return made.stdout.trim();
}

describe('invitation links', () => {
  it('are read as the secret they end with; a bare secret is kept', () => {
    expect(invitationSecret('https://emend.example.com/app/#/invitation/inv_abc-DEF_123')).toBe('inv_abc-DEF_123');
    expect(invitationSecret('https://emend.example.com/app/#/invitation/inv_abc/')).toBe('inv_abc');
    expect(invitationSecret('inv_abc')).toBe('inv_abc');
  });
});

describe('emend workspaces', { timeout: 300_000 }, () => {
  it('create, a token for it, invite and accept, roles, scopes, transfer, export, leave and delete', async () => {
    const alice = await newAccount(h, { scm: false });
    const bob = await newAccount(h, { scm: false });
    const a = as(alice.token);
    const b = as(bob.token);

    const created = await a(['workspaces', 'create', 'Platform team', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const team = JSON.parse(created.stdout) as { id: string; role: string; personal: boolean };
    expect(team).toMatchObject({ role: 'owner', personal: false });
    const listed = await a(['workspaces', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    // The personal workspace (the account's own id) first, marked as the one this token acts in.
    expect(listed.stdout.split('\n').slice(1, 3)).toEqual([
      expect.stringMatching(new RegExp(`^\\*\\s+${alice.account.id}\\s+\\S.*\\s+personal\\s+owner\\s+free\\s+0$`)),
      expect.stringMatching(new RegExp(`^\\s+${team.id}\\s+Platform team\\s+team\\s+owner\\s+free\\s+0$`)),
    ]);
    // A token for the team; an unknown scope is a usage error.
    expect((await a(['tokens', 'create', '--workspace', team.id, '--scopes', 'tasks:read,everything'])).code).toBe(64);
    const at = as(await tokenFor(a, ['--workspace', team.id, '--name', 'team']));
    const shown = await at(['workspaces', 'show']);
    expect(shown.stdout).toMatch(/^name:\s+Platform team$/m);
    expect(shown.stdout).toMatch(/^your role:\s+owner$/m);
    expect((await at(['workspaces', 'rename', 'Platform'])).stdout).toBe(`renamed workspace ${team.id} to Platform\n`);
    expect((await at(['me'])).stdout).toMatch(new RegExp(`^workspace:\\s+Platform \\(team, owner\\) ${team.id}$`, 'm'));

    // The invitation link alone on stdout; accepted from stdin, once.
    const invited = await at(['workspaces', 'invite', '--role', 'member', '--email', bob.account.email]);
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.stdout).toMatch(/^http:\/\/\S+\/app\/#\/invitation\/inv_\S+\n$/);
    expect(invited.stderr).toContain('as member');
    const joined = await b(['workspaces', 'accept'], invited.stdout);
    expect(joined.code, joined.stderr).toBe(0);
    expect(joined.stdout).toBe(`joined workspace ${team.id} (Platform) as member\n`);
    expect(joined.stderr).toContain(`emend tokens create --workspace ${team.id}`);
    const again = await b(['workspaces', 'accept'], invited.stdout);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/\(not_found, HTTP 404, /);
    expect((await b(['workspaces', 'accept'], '')).code).toBe(64);

    const members = await at(['workspaces', 'members']);
    expect(members.stdout).toMatch(new RegExp(`^${alice.account.id}\\s+${alice.account.email}\\s+.*\\s+owner\\s`, 'm'));
    expect(members.stdout).toMatch(new RegExp(`^${bob.account.id}\\s+${bob.account.email}\\s+.*\\s+member\\s`, 'm'));
    const promoted = await at(['workspaces', 'role', bob.account.email.toUpperCase(), 'maintainer']);
    expect(promoted.stdout).toBe(`${bob.account.email} is now maintainer\n`);
    const nobody = await at(['workspaces', 'role', 'nobody@example.com', 'viewer']);
    expect(nobody.code).toBe(64);
    expect(nobody.stderr).toContain('no member "nobody@example.com" in Platform');
    expect((await at(['workspaces', 'role', bob.account.id, 'owner'])).code).toBe(64);

    // Bob's token narrowed to reading: his role could invite, the token cannot.
    const bt = as(await tokenFor(b, ['--workspace', team.id, '--scopes', 'tasks:read']));
    const narrowed = await bt(['workspaces', 'invite', '--role', 'viewer']);
    expect(narrowed.code).toBe(3);
    expect(narrowed.stderr).toMatch(/lacks the members scope .*\(forbidden, HTTP 403, /);
    const tokens = JSON.parse((await b(['tokens', 'list', '--json'])).stdout) as { workspace_id: string }[];
    expect(tokens.map((t) => t.workspace_id).sort()).toEqual([bob.account.id, team.id].sort());

    // The workspace's tasks, and --mine.
    await insertTasks(h.deps.db, [
      taskRow(team.id, 1, { createdBy: alice.account.id }),
      taskRow(team.id, 2, { createdBy: bob.account.id }),
    ]);
    const all = JSON.parse((await bt(['task', 'list', '--json'])).stdout) as { prompt: string }[];
    expect(all.length).toBe(2);
    const mine = JSON.parse((await bt(['task', 'list', '--mine', '--json'])).stdout) as { prompt: string }[];
    expect(mine.map((t) => t.prompt)).toEqual(['Fix the off-by-one error in handler 2']);

    // Invitations: listed without secrets; one revoked.
    const second = JSON.parse((await at(['workspaces', 'invite', '--role', 'viewer', '--json'])).stdout) as {
      id: string;
    };
    expect((await at(['workspaces', 'revoke-invitation', second.id])).stdout).toBe(`revoked invitation ${second.id}\n`);
    const invitations = await at(['workspaces', 'invitations']);
    expect(invitations.stdout).toMatch(new RegExp(`^${second.id}\\s+viewer\\s+revoked `, 'm'));
    expect(invitations.stdout).toMatch(new RegExp(`\\s+member\\s+${bob.account.email}\\s+accepted `, 'm'));
    expect(invitations.stdout).not.toContain('inv_');

    // Ownership to Bob: Alice, now a maintainer, may not export; Bob's full token may.
    const moved = await at(['workspaces', 'transfer', bob.account.id]);
    expect(moved.stdout).toBe(`${bob.account.email} now owns Platform; you stay as a maintainer\n`);
    const refused = await at(['workspaces', 'export']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/owner role .*\(forbidden, HTTP 403, /);
    const bf = as(await tokenFor(b, ['--workspace', team.id]));
    const exported = await bf(['workspaces', 'export']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ workspace: { id: team.id, name: 'Platform' } });

    // Alice leaves; her team token goes with her.
    expect((await at(['workspaces', 'leave'])).stdout).toContain(`left workspace ${team.id} (Platform)`);
    expect((await at(['me'])).code).toBe(3);

    // Delete asks for --yes; a personal workspace is not deleted on its own.
    const unsure = await bf(['workspaces', 'delete']);
    expect(unsure.code).toBe(64);
    expect(unsure.stderr).toContain('add --yes');
    expect((await bf(['workspaces', 'show'])).code).toBe(0);
    expect((await bf(['workspaces', 'delete', '--yes'])).stdout).toContain(`deleted workspace ${team.id} (Platform)`);
    const left = JSON.parse((await b(['workspaces', 'list', '--json'])).stdout) as { id: string }[];
    expect(left.map((w) => w.id)).toEqual([bob.account.id]);
    const personal = await a(['workspaces', 'delete', '--yes']);
    expect(personal.code).toBe(3);
    expect(personal.stderr).toMatch(/personal workspace .*\(conflict, HTTP 409, /);
  });

  it("limits: shows the caps and the month's use, sets the workspace's, refuses a bad amount", async () => {
    const owner = await newAccount(h, { scm: false });
    const a = as(owner.token);
    const set = await a(['workspaces', 'limits', '--spend-cap', '12.50', '--credit-cap', '4']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^model spend:\s+\$0\.00 of \$12\.50$/m);
    expect(set.stdout).toMatch(/^credits:\s+0 of 4$/m);
    const removed = await a(['workspaces', 'limits', '--credit-cap', 'none', '--json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ monthly_spend_cap_usd: 12.5, monthly_credit_cap: null });
    const bad = await a(['workspaces', 'limits', '--spend-cap', '1.005']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('at most two decimals');
  });
});
