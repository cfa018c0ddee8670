/**
 * Whether a failed verdict sends the task back to the rework step: at most two retries, fewer if
 * the plan says so. The step loop decides by it; the validator step reads it too, to know whether
 * a verdict it gives can still be followed by a retry (docs/validator.md, "The focused pass").
 */
export const mayRetry = (retryCount: number, limits: { maxRetries: number }): boolean =>
  retryCount < Math.min(limits.maxRetries, 2);
