import { ErrorBody } from './errors.js';
import { adminSchemas } from './routes/admin.js';
import { keySchemas } from './routes/keys.js';
import { profileSchemas } from './routes/me.js';
import { taskStreamSchemas } from './routes/task-stream.js';
import { taskSchemas } from './routes/tasks.js';
import { tokenSchemas } from './routes/tokens.js';
import { webhookSchemas } from './routes/webhooks.js';
import { ssoSchemas } from './routes/sso.js';
import { spendLimitSchemas } from './routes/spend-limits.js';
import { workspaceSchemas } from './routes/workspaces.js';
import { auditSchemas } from './routes/audit.js';

/**
 * The named schemas of the OpenAPI document, each declared in its resource's route file beside
 * the handlers and presenter that produce it (the Error body with the error handler). Registered
 * once with app.addSchema and referenced by $id; the document lists them in this order, after
 * the step outputs (http/openapi.ts).
 */
export const namedSchemas = [
  ErrorBody,
  ...keySchemas,
  ...taskSchemas,
  ...taskStreamSchemas,
  ...tokenSchemas,
  ...profileSchemas,
  ...adminSchemas,
  ...webhookSchemas,
  ...workspaceSchemas,
  ...ssoSchemas,
  ...spendLimitSchemas,
  ...auditSchemas,
];
