import type { TSchema } from '@sinclair/typebox';
import addFormats from 'ajv-formats';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { TaskStateEvent } from '../../src/http/routes/task-stream.js';
import { Task, TaskSummary } from '../../src/http/routes/tasks.js';
import { taskJson, taskStateJson, taskSummaryJson } from '../../src/tasks/present.js';
import type { Task as TaskRow } from '../../src/tasks/task.js';

// The task object's presenter lives below the HTTP layer (webhook events carry it), away from
// the schemas the document publishes: these checks keep the two in step, field for field.

const at = new Date('2026-01-05T10:00:00.000Z');
const finished: TaskRow = {
  id: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1d',
  workspaceId: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1e',
  createdBy: null,
  tokenId: null,
  parentId: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1f',
  taskType: 'fix',
  mode: 'pr',
  status: 'done',
  approvalMode: 'auto',
  fixer: 'agent',
  fixAttempts: 3,
  prompt: 'Fix the crash in Session.send when the proxy URL has no scheme',
  repoUrl: 'https://github.com/psf/requests',
  repoOwner: 'psf',
  repoName: 'requests',
  baseBranch: 'main',
  prUrl: 'https://github.com/psf/requests/pull/7',
  deployedUrl: null,
  deployedRepo: null,
  siteSlug: null,
  diffSummary: 'diff --git a/requests/sessions.py b/requests/sessions.py',
  costUsd: 0.0132,
  tokensTotal: 5120,
  durationMs: 48_000,
  retryCount: 1,
  prMerged: true,
  prMergedAt: at,
  humanEditAfter: false,
  byok: false,
  creditHeld: false,
  error: null,
  progress: {},
  currentStep: null,
  workerId: null,
  heartbeatAt: null,
  attempts: 1,
  gateSince: null,
  trigger: null,
  createdAt: at,
  startedAt: at,
  finishedAt: at,
};
const pending: TaskRow = {
  ...finished,
  taskType: 'scaffold',
  mode: 'preview',
  status: 'pending',
  parentId: null,
  repoUrl: null,
  repoOwner: null,
  repoName: null,
  prUrl: null,
  diffSummary: null,
  costUsd: 0,
  tokensTotal: 0,
  durationMs: null,
  retryCount: 0,
  prMerged: false,
  prMergedAt: null,
  startedAt: null,
  finishedAt: null,
};

const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);

describe('the task presenter and the schemas it answers to', () => {
  const views: [string, TSchema, (t: TaskRow) => Record<string, unknown>][] = [
    ['Task', Task, taskJson],
    ['TaskSummary', TaskSummary, taskSummaryJson],
    ['TaskStateEvent', TaskStateEvent, taskStateJson],
  ];
  for (const [name, schema, present] of views) {
    it(`${name}: every field the schema lists and no other, valid for a finished and a pending task`, () => {
      for (const row of [finished, pending]) {
        const json = present(row);
        expect(Object.keys(json).sort()).toEqual(Object.keys(schema.properties as object).sort());
        expect(ajv.validate(schema, json), ajv.errorsText()).toBe(true);
      }
    });
  }

  it('the summary and the state event are views of the task object: the same values', () => {
    const task = taskJson(finished);
    expect(task).toMatchObject(taskSummaryJson(finished));
    expect(task).toMatchObject(taskStateJson(finished));
  });
});
