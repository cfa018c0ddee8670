import { createHmac, randomUUID } from 'node:crypto';
import type { HookEvent, ReactionTarget, ThreadRef } from '../../../src/scm/code-host.js';
import { type GitHost, gitRoute } from './git.js';
import { type OAuthHost, oauthProvider } from './oauth.js';
import { lineCommentsOf, reactionsOn } from './ops.js';
import { type Ctx, type RestHost, pick, restApi } from './rest.js';
import { type HostLayout, type PathRoutes, type Urls, startHost } from './server.js';
import type { CommitContent } from './bare.js';
import { type CiJobSpec, type CiRun, reportCi } from './ci.js';
import {
  ACCESS,
  type Comment,
  type CommitOptions,
  type Issue,
  type NewRepo,
  type Pull,
  type RepoState,
} from './state.js';
import { type Review, type ReviewState, State, type UserState, fullName } from './state.js';

/**
 * A fake code host from its spec (where it serves what, its REST routes and words, its OAuth
 * settings, its git words), and the test-side API every host has, so tests share assertions.
 */

/**
 * `protectedRefusal`: the pre-receive hook's shell lines refusing a push to a protected branch
 * (see Bare). `newToken` makes a personal token, `scopes` says its scopes (undefined: the
 * State's default). `ownersAreGroups` (GitLab): an owner no user was added for is a group.
 */
export interface HostSpec {
  layout: HostLayout;
  protectedRefusal: string;
  rest(urls: Urls): RestHost;
  oauth: OAuthHost;
  git: GitHost;
  newToken(): string;
  scopes?(readOnly: boolean): string[];
  ownersAreGroups?: boolean;
  hooks: HookWords;
  /** Whether issues and pulls share one number sequence (GitHub, Gitea; default) or have one each (GitLab). */
  sharedNumbers?: boolean;
  actions: HostActions;
  /** The host's own web pages (GitHub's App manifest and install pages). */
  pages?(state: State, urls: Urls): PathRoutes;
  /** More receivers of a repository's delivery than its hooks (GitHub: the Apps installed on it). */
  alsoDeliver?(repo: RepoState, d: Delivery): HookTarget[];
}

/**
 * Where a delivery goes: a URL signed with `secret`; `headers` beside the host's, `payload` the
 * delivery's payload as this receiver gets it (GitHub adds an App's `installation`).
 */
export type HookTarget = {
  url: string;
  secret: string;
  headers?: Record<string, string>;
  payload?: (p: object) => object;
};

/** One delivery: to the hooks subscribed to any of `to`, under the event word `event` (Gitea: and its `type`). */
export type Delivery = { to: string[]; event: string; type?: string; payload: object };

/**
 * What the host's webhooks send when a person acts on it, in its own words and payloads; `v`
 * shows the records (as nobody in particular), `by` is the person (the payloads' sender).
 */
export interface HostActions {
  issueOpened(v: Ctx, repo: RepoState, issue: Issue, by: UserState): Delivery[];
  /** `before`: the body an edit replaced. */
  commented(v: Ctx, repo: RepoState, c: Comment, action: CommentAction, by: UserState, before?: string): Delivery[];
  labeled(v: Ctx, repo: RepoState, issue: Issue, label: string, previous: string[], by: UserState): Delivery[];
  lineCommented(v: Ctx, repo: RepoState, pull: Pull, c: Comment, review: Review, by: UserState): Delivery[];
  /** `summary`: the review's text as a comment of the conversation, where the host keeps it as one (GitLab). */
  reviewed(
    v: Ctx,
    ...[repo, pull, review, comments, by, summary]: [RepoState, Pull, Review, Comment[], UserState, Comment?]
  ): Delivery[];
  /** A review's text is a comment of the pull's conversation (GitLab: a note), not a field of the review. */
  summaryIsComment?: boolean;
  /** CI reported on a commit (ci.ts): GitHub's check runs, suite and statuses, GitLab's pipeline, Gitea's statuses, jobs and run. */
  ciReported(v: Ctx, repo: RepoState, run: CiRun, by: UserState): Delivery[];
}

export type CommentAction = 'created' | 'edited' | 'deleted';

/** A hook's answer to one delivery, and the event word it was sent under. */
export type HookAnswer = { event: string; status: number; body: string };

/**
 * A host's webhook words: for each of emend's events, the hook event (GitLab: the switch) it is
 * delivered under and the event header's value; and a delivery's headers from its event word,
 * its id, the hex HMAC-SHA256 of its body under the hook's secret and the secret itself.
 */
export interface HookWords {
  events: Record<HookEvent, [subscribed: string, event: string]>;
  headers(d: { event: string; type?: string; id: string; hmac: string; secret: string }): Record<string, string>;
}

export type FakeRepoInfo = { private: boolean; defaultBranch: string; fork: boolean; parent?: string };

/**
 * createRepo's options: a new repository's (visibility, allowDrafts, description, branch) and its
 * first commit's `files` (default: a README) and `links`. `visibility` wins over `internal` and
 * `private`; `collaborators` may push (Developer on GitLab), `readers` (GitLab's `reporters`) may
 * only read.
 */
export interface RepoOptions extends Omit<NewRepo, 'fork'>, Pick<CommitContent, 'links'> {
  files?: Record<string, string>;
  private?: boolean;
  internal?: boolean;
  collaborators?: string[];
  readers?: string[];
  reporters?: string[];
  protectedBranches?: string[];
}

/**
 * The test-side API every fake code host (GitHub, GitLab, Gitea) has, as startFake makes it. `webUrl`
 * (http://127.0.0.1:PORT[/prefix]) serves git smart HTTP and OAuth, `apiUrl` the REST API.
 * `addUser` makes a user and a token for it (default: one shaped like the host's); again for a
 * known login it adds the given token (or returns the first one); `readOnly`: a token that can
 * read but not write. `commit` writes a commit on a branch (a new one starts at `from`) without
 * hooks; `pulls` lists the pull requests (merge requests: number = iid) targeting a repository;
 * `repo` tells FakeRepoInfo and the host's `Extra` fields; `protectBranches` adds protected
 * branches (pushes refused in the host's words); `failNext` answers the next matching REST
 * request with `reply` (default body: the host's error body); `holdTogether` holds the next
 * `count` matching REST requests until all of them have arrived (a lock-step for races).
 */
export type FakeHost<Extra extends keyof RepoState = never> = Awaited<ReturnType<typeof startFake<Extra>>>['fake'];

/** Starts the host of `spec`: its test-side API (repo() adds the `extra` fields) and its State and OAuth for the host's extras. */
export async function startFake<Extra extends keyof RepoState = never>(spec: HostSpec, extra: Extra[] = []) {
  let made!: { state: State; oauth: ReturnType<typeof oauthProvider>; rest: ReturnType<typeof restApi> };
  const server = await startHost(spec.layout, (root, scratch, urls) => {
    const state = new State(root, scratch, spec.protectedRefusal, spec.sharedNumbers ?? true);
    const rest = restApi(spec.rest(urls), state, urls, spec.layout.apiPath);
    made = { state, oauth: oauthProvider(spec.oauth, state, spec.layout.oauthPath), rest };
    const pages = spec.pages?.(state, urls);
    return { rest: rest.handle, oauth: made.oauth.handle, git: gitRoute(state, spec.git), ...(pages ? { pages } : {}) };
  });
  const { state, oauth, rest } = made;
  const fail = (why: string): never => {
    throw new Error(`${spec.layout.name}: ${why}`);
  };
  const need = (owner: string, name: string) => state.repo(owner, name) ?? fail(`no repository ${owner}/${name}`);
  /** The repository's directory and the commit `ref` names. */
  const rev = (owner: string, name: string, ref: string): [string, string] => {
    const { dir } = need(owner, name);
    return [dir, state.git.resolve(dir, ref) ?? fail(`${owner}/${name} has no ${ref}`)];
  };
  /**
   * POSTs each delivery to every active hook of the repository subscribed to it, as the host
   * delivers (its event word, a fresh delivery id, signed or with the token from the hook's
   * secret), one after the other; every hook's answer.
   */
  /** Every delivery sent, as sent (test side: redeliver one, or one with its proof changed). */
  const sent: SentDelivery[] = [];
  const post = async (d: SentDelivery): Promise<HookAnswer> => {
    const res = await fetch(d.url, { method: 'POST', headers: d.headers, body: d.body });
    return { event: d.event, status: res.status, body: await res.text() };
  };
  /** POSTs one event to each target, signed with its secret, one after the other; their answers. */
  const deliverTo = async (targets: HookTarget[], event: string, type: string | undefined, payload: object) => {
    const answers: HookAnswer[] = [];
    for (const target of targets) {
      const body = JSON.stringify(target.payload ? target.payload(payload) : payload);
      const hmac = createHmac('sha256', target.secret).update(body).digest('hex');
      const headers = {
        'content-type': 'application/json',
        ...spec.hooks.headers({ event, ...(type ? { type } : {}), id: randomUUID(), hmac, secret: target.secret }),
        ...target.headers,
      };
      const d = { url: target.url, event, headers, body };
      sent.push(d);
      answers.push(await post(d));
    }
    return answers;
  };
  const send = async (repo: RepoState, deliveries: Delivery[]): Promise<HookAnswer[]> => {
    const answers: HookAnswer[] = [];
    for (const d of deliveries) {
      // The repository's hooks, then its groups' (GitLab) or organisation's (Gitea), as the hosts deliver.
      const hooks = [...repo.hooks, ...state.groupHooks(repo)].filter(
        (h) => h.active && h.events.some((e) => d.to.includes(e)),
      );
      const targets = [...hooks, ...(spec.alsoDeliver?.(repo, d) ?? [])];
      answers.push(...(await deliverTo(targets, d.event, d.type, d.payload)));
    }
    return answers;
  };
  const actions = personActions(state, server.urls, spec.actions, need, send);
  const fake = {
    ...server.urls,
    requests: server.requests,
    addUser(login: string, opts: { token?: string; name?: string; email?: string; readOnly?: boolean } = {}) {
      const user = state.ensureUser(login);
      user.name = opts.name ?? user.name;
      user.email = opts.email ?? user.email;
      const first = [...state.tokens.entries()].find(([, t]) => t.login === user.login);
      if (first && opts.token === undefined && opts.readOnly === undefined)
        return { login: user.login, token: first[0] };
      const token = opts.token ?? spec.newToken();
      const readOnly = opts.readOnly ?? false;
      state.addToken(user.login, token, { readOnly, scopes: spec.scopes?.(readOnly) });
      return { login: user.login, token };
    },
    createRepo(owner: string, name: string, opts: RepoOptions = {}) {
      if (spec.ownersAreGroups && (state.isGroup(owner) || !state.user(owner))) state.ensureGroup(owner);
      const visibility = opts.visibility ?? (opts.internal ? 'internal' : opts.private ? 'private' : 'public');
      const branch = opts.branch ?? 'main';
      const repo = state.addRepo(owner, name, { ...opts, visibility, branch });
      for (const c of opts.collaborators ?? []) repo.members.set(c.toLowerCase(), ACCESS.developer);
      for (const r of [...(opts.readers ?? []), ...(opts.reporters ?? [])])
        repo.members.set(r.toLowerCase(), ACCESS.reporter);
      const files = opts.files ?? { 'README.md': `# ${name}\n` };
      const commit = state.commit(repo, { branch, files, links: opts.links, message: 'Initial commit' });
      state.setProtected(repo, opts.protectedBranches ?? []);
      return { commit };
    },
    commit: (owner: string, name: string, opts: CommitOptions) => state.commit(need(owner, name), opts),
    protectBranches(owner: string, name: string, branches: string[]) {
      const repo = need(owner, name);
      state.setProtected(repo, [...repo.protectedBranches, ...branches]);
    },
    branchHead(owner: string, name: string, branch: string) {
      const repo = state.repo(owner, name);
      return repo && state.git.branchHead(repo.dir, branch);
    },
    /** Whether commit `ancestor` is `descendant` or one of its ancestors (a push that kept history). */
    isAncestor(owner: string, name: string, ancestor: string, descendant: string) {
      return state.git.isAncestor(need(owner, name).dir, ancestor, descendant);
    },
    files: (owner: string, name: string, ref: string) => state.git.files(...rev(owner, name, ref)),
    diff: (owner: string, name: string, base: string, head: string) =>
      state.git.diff(...rev(owner, name, base), rev(owner, name, head)[1]),
    pulls: (owner: string, name: string) => need(owner, name).pulls.map((p) => ({ ...p, head: { ...p.head } })),
    mergePull: (owner: string, name: string, number: number) => state.mergePull(need(owner, name), number),
    /** The repository's hooks as stored, secrets included (test side only). */
    hooks: (owner: string, name: string) => need(owner, name).hooks.map((h) => ({ ...h, events: [...h.events] })),
    /** Sets a hook's events (the host's words), as a hook registered with fewer looks (test side only). */
    setHookEvents(owner: string, name: string, id: number, events: string[]) {
      const hook = need(owner, name).hooks.find((h) => h.id === id) ?? fail(`no hook ${id} on ${owner}/${name}`);
      hook.events = [...events];
    },
    /**
     * POSTs `payload` to every active hook of the repository registered for `event`, as the host
     * delivers (its event word, a fresh delivery id, signed or with the token from the hook's
     * secret); each hook's answer.
     */
    async deliver(owner: string, name: string, event: HookEvent, payload: object) {
      const [subscribed, word] = spec.hooks.events[event];
      const answers = await send(need(owner, name), [{ to: [subscribed], event: word, payload }]);
      return answers.map(({ status, body }) => ({ status, body }));
    },
    ...actions,
    /** The deliveries sent so far, oldest first (secrets and signatures included: test side only). */
    sent: () => sent.map((d) => ({ ...d, headers: { ...d.headers } })),
    /**
     * Sends delivery `index` again as it was (a host's "Redeliver" on GitHub and GitLab keeps the
     * delivery id), or with `headers` changed (a forged or wrongly signed one); the hook's answer.
     */
    resend: (index: number, headers: Record<string, string> = {}) => {
      const d = sent.at(index) ?? fail(`no delivery ${index}`);
      return post({ ...d, headers: { ...d.headers, ...headers } });
    },
    repo(owner: string, name: string): (FakeRepoInfo & Pick<RepoState, Extra>) | undefined {
      const r = state.repo(owner, name);
      const shared = r && { private: r.visibility !== 'public', defaultBranch: r.defaultBranch, fork: r.fork };
      return r && { ...shared!, ...(r.parent ? { parent: r.parent } : {}), ...pick(r, ...extra) };
    },
    oauthAs: oauth.approveAs,
    addOAuthApp: oauth.addApp,
    failNext: rest.failNext,
    holdTogether: rest.holdTogether,
    close: server.close,
  };
  return { fake, state, oauth, deliverTo };
}

/** A comment as a test reads it back. */
export type FakeComment = { id: string; author: string; body: string; createdAt: string };
export type FakeLineComment = FakeComment & { path: string; line: number; reviewId: string | null };
/** A delivery as the fake sent it. */
type SentDelivery = { url: string; event: string; headers: Record<string, string>; body: string };

/** A line comment of a review: where, and what it says. */
export type ReviewLine = { path: string; line: number; body: string };

/**
 * What a person does on the host (test side): each action is stored in the State, as the host's
 * REST API then shows it, and delivered to the repository's hooks that asked for its event, in
 * the host's words and payloads (spec.actions); `answers` are the hooks' replies. Authors are
 * users the host knows (made when missing). Ids are the host's, as text.
 */
function personActions(
  state: State,
  urls: { webUrl: string; apiUrl: string },
  host: HostActions,
  need: (owner: string, name: string) => RepoState,
  send: (repo: RepoState, deliveries: Delivery[]) => Promise<HookAnswer[]>,
) {
  const v: Ctx = { state, urls, caller: undefined, login: undefined, body: {}, query: new URLSearchParams() };
  const fail = (why: string): never => {
    throw new Error(`fake host: ${why}`);
  };
  const pullOf = (repo: RepoState, n: number) => state.pull(repo, n) ?? fail(`${fullName(repo)} has no pull #${n}`);
  const commentOf = (repo: RepoState, id: string) =>
    state.comment(repo, Number(id)) ?? fail(`${fullName(repo)} has no comment ${id}`);
  const reviewOf = (repo: RepoState, pull: number, id: string | undefined, by: string) =>
    id === undefined
      ? // A line comment outside a review is a review of its own on GitHub and Gitea: it gets one here too.
        state.addReview(repo, { pull, user: by, state: 'commented', body: '' })
      : (repo.reviews.find((r) => String(r.id) === id && r.pull === pull) ?? fail(`no review ${id} on #${pull}`));
  const view = (c: Comment): FakeComment => ({
    id: String(c.id),
    author: c.user,
    body: c.body,
    createdAt: c.createdAt,
  });
  return {
    /** A new issue (`issues` opened, GitLab `Issue Hook` open); its number and web page. */
    async openIssue(owner: string, name: string, o: { author: string; title: string; body?: string }) {
      const repo = need(owner, name);
      const by = state.ensureUser(o.author);
      const issue = state.addIssue(repo, { title: o.title, body: o.body ?? '', user: by.login });
      const answers = await send(repo, host.issueOpened(v, repo, issue, by));
      return { number: issue.number, url: issueUrl(urls.webUrl, repo, issue.number, state.sharedNumbers), answers };
    },
    /** A comment on an issue's or a pull's conversation. */
    async commentOn(owner: string, name: string, thread: ThreadRef, o: { author: string; body: string }) {
      const repo = need(owner, name);
      if (!state.hasThread(repo, thread)) fail(`${owner}/${name} has no ${thread.kind} #${thread.number}`);
      const by = state.ensureUser(o.author);
      const c = state.addComment(repo, { thread: { ...thread }, user: by.login, body: o.body });
      return { comment: view(c), answers: await send(repo, host.commented(v, repo, c, 'created', by)) };
    },
    /** A new text for a comment, by its author unless `author` says who edits it. */
    async editComment(owner: string, name: string, commentId: string, o: { body: string; author?: string }) {
      const repo = need(owner, name);
      const c = commentOf(repo, commentId);
      const before = c.body;
      Object.assign(c, { body: o.body, updatedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') });
      const by = state.ensureUser(o.author ?? c.user);
      return { answers: await send(repo, host.commented(v, repo, c, 'edited', by, before)) };
    },
    /** Removes a comment (GitLab sends nothing for it). */
    async deleteComment(owner: string, name: string, commentId: string, o: { author?: string } = {}) {
      const repo = need(owner, name);
      const c = commentOf(repo, commentId);
      repo.comments.splice(repo.comments.indexOf(c), 1);
      const by = state.ensureUser(o.author ?? c.user);
      return { answers: await send(repo, host.commented(v, repo, c, 'deleted', by)) };
    },
    /** A label added to an issue. */
    async addLabel(owner: string, name: string, number: number, o: { author: string; label: string }) {
      const repo = need(owner, name);
      const issue = state.issue(repo, number) ?? fail(`${owner}/${name} has no issue #${number}`);
      const previous = [...issue.labels];
      if (!issue.labels.includes(o.label)) issue.labels.push(o.label);
      const by = state.ensureUser(o.author);
      return { answers: await send(repo, host.labeled(v, repo, issue, o.label, previous, by)) };
    },
    /** A comment on a line of a pull's change: in review `reviewId`, else in a review of its own. */
    async lineComment(
      owner: string,
      name: string,
      pull: number,
      o: { author: string; path: string; line: number; body: string; reviewId?: string },
    ) {
      const repo = need(owner, name);
      const p = pullOf(repo, pull);
      const by = state.ensureUser(o.author);
      const review = reviewOf(repo, pull, o.reviewId, by.login);
      const line = { path: o.path, line: o.line, review: review.id };
      const c = state.addComment(repo, { thread: { kind: 'pull', number: pull }, user: by.login, body: o.body, line });
      const answers = await send(repo, host.lineCommented(v, repo, p, c, review, by));
      return { comment: view(c), reviewId: String(review.id), answers };
    },
    /** A submitted review, its line comments with it. */
    async review(
      owner: string,
      name: string,
      pull: number,
      o: { author: string; state: ReviewState; body?: string; comments?: ReviewLine[] },
    ) {
      const repo = need(owner, name);
      const p = pullOf(repo, pull);
      const by = state.ensureUser(o.author);
      const review = state.addReview(repo, { pull, user: by.login, state: o.state, body: o.body ?? '' });
      const comments = (o.comments ?? []).map((l) =>
        state.addComment(repo, {
          ...{ thread: { kind: 'pull', number: pull }, user: by.login, body: l.body },
          line: { path: l.path, line: l.line, review: review.id },
        }),
      );
      // Made after the line comments: GitLab publishes a review's diff notes, then its text.
      const summary =
        host.summaryIsComment && review.body
          ? state.addComment(repo, { thread: { kind: 'pull', number: pull }, user: by.login, body: review.body })
          : undefined;
      const answers = await send(repo, host.reviewed(v, repo, p, review, comments, by, summary));
      return { reviewId: String(review.id), comments: comments.map(view), answers };
    },
    /**
     * CI reported on the head of `branch` (or `sha`): the jobs are stored (the REST API shows them,
     * their logs) and the host's events delivered; `by` is the payloads' sender (default `ci-runner`).
     */
    async reportCi(owner: string, name: string, o: { branch: string; sha?: string; jobs: CiJobSpec[]; by?: string }) {
      const repo = need(owner, name);
      const run = reportCi(state, repo, o);
      const by = state.ensureUser(o.by ?? 'ci-runner');
      return {
        run: { id: run.id, sha: run.sha, jobs: run.jobs.map((j) => j.id) },
        answers: await send(repo, host.ciReported(v, repo, run, by)),
      };
    },
    /** The conversation of an issue or a pull, oldest first (not its line comments). */
    threadComments: (owner: string, name: string, thread: ThreadRef): FakeComment[] =>
      state.threadComments(need(owner, name), thread).map(view),
    /** A pull's line comments, oldest first; of one review when `reviewId` is given. */
    lineComments: (owner: string, name: string, pull: number, reviewId?: string): FakeLineComment[] =>
      lineCommentsOf(need(owner, name), pull, reviewId === undefined ? undefined : Number(reviewId)).map((c) => ({
        ...view(c),
        ...{ path: c.line!.path, line: c.line!.line, reviewId: c.line!.review ? String(c.line!.review) : null },
      })),
    /** The reactions on a thread or a comment, in the host's words (GitLab: award emoji names). */
    reactions(owner: string, name: string, target: ReactionTarget) {
      const on = target.on === 'thread' ? { ...target.thread } : { comment: Number(target.commentId) };
      return reactionsOn(need(owner, name), on).map((r) => ({ user: r.user, content: r.content }));
    },
  };
}

/** An issue's web page: GitHub's and Gitea's /issues/N, GitLab's /-/issues/N (the hosts that number apart). */
const issueUrl = (webUrl: string, repo: RepoState, n: number, shared: boolean) =>
  `${webUrl}/${fullName(repo)}/${shared ? '' : '-/'}issues/${n}`;
