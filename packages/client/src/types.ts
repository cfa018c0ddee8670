/** Named types of the API, taken from the generated document types so they cannot drift from the server. */
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

export type { components, paths };
export type Task = Schemas['Task'];
export type TaskSummary = Schemas['TaskSummary'];
export type Log = Schemas['Log'];
export type Profile = Schemas['Profile'];
export type TaskStatus = Task['status'];
/** The codes of the API's Error body (`error`). */
export type ErrorCode = Schemas['Error']['error'];
/** The body of every error answer. */
export type ErrorBody = Schemas['Error'];
/** The body of POST /v1/tasks. */
export type CreateTaskBody = NonNullable<paths['/v1/tasks']['post']['requestBody']>['content']['application/json'];
/** The data of a `state` event of the task stream. */
export type TaskStateEvent = Schemas['TaskStateEvent'];
/** The data of a `log` event of the task stream. */
export type TaskLogEvent = Schemas['TaskLogEvent'];
/** The statuses a task ends in; the stream's `end` event carries one. */
export type TerminalStatus = Extract<TaskStatus, 'done' | 'failed' | 'cancelled'>;
