import { LetKiteError } from '@letkite/protocol';
import type { z } from 'zod';

/**
 * Validates an operation's parameters again on the agent (a compromised gateway must not get past the schema);
 * a mismatch is `invalid_params` naming each bad field.
 */
export function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
  throw new LetKiteError('invalid_params', `invalid parameters: ${summary}`, { issues });
}
