import { z } from 'zod';
import { MAX_REDACTION_PATTERN_LENGTH, MAX_REDACTION_PATTERNS } from '../../output';
import { saveRedactionPatterns } from '../../policy/redaction-patterns';
import { type OpContext, parseInput, requirePermission } from '../op-context';

export const SetRedactionPatternsInput = z.object({
  patterns: z.array(z.string().min(1).max(MAX_REDACTION_PATTERN_LENGTH)).max(MAX_REDACTION_PATTERNS),
});

/** The account's redaction patterns, for those who edit policies. */
export async function listRedactionPatterns(ctx: OpContext) {
  requirePermission(ctx.user, 'policies.manage');
  return { patterns: await ctx.deps.store.getRedactionPatterns(ctx.user.accountId) };
}

/** Replaces the account's redaction patterns (validated; see compileRedactionPatterns). */
export async function setRedactionPatterns(ctx: OpContext, raw: unknown) {
  requirePermission(ctx.user, 'policies.manage');
  const input = parseInput(SetRedactionPatternsInput, raw);
  return saveRedactionPatterns(
    { store: ctx.deps.store, now: ctx.now },
    { accountId: ctx.user.accountId, actor: `user:${ctx.user.userId}`, patterns: input.patterns },
  );
}
