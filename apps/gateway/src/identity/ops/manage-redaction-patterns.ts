import { z } from 'zod';
import { MAX_REDACTION_PATTERN_LENGTH, MAX_REDACTION_PATTERNS } from '../../output';
import { saveRedactionPatterns } from '../../policy/redaction-patterns';
import { actorLabel } from '../../services/actor';
import { defineService } from '../../services/define-service';
import { NoInput, type OpContext } from '../op-context';

export const SetRedactionPatternsInput = z.object({
  patterns: z.array(z.string().min(1).max(MAX_REDACTION_PATTERN_LENGTH)).max(MAX_REDACTION_PATTERNS),
});

/** The account's redaction patterns, for those who edit policies. */
export const listRedactionPatterns = defineService({
  name: 'listRedactionPatterns',
  input: NoInput,
  permission: 'policies.manage',
  run: async (ctx: OpContext, _input) => {
    return { patterns: await ctx.deps.store.getRedactionPatterns(ctx.actor.user.accountId) };
  },
});

/** Replaces the account's redaction patterns (validated; see compileRedactionPatterns). */
export const setRedactionPatterns = defineService({
  name: 'setRedactionPatterns',
  input: SetRedactionPatternsInput,
  permission: 'policies.manage',
  run: async (ctx: OpContext, input) => {
    return saveRedactionPatterns(
      { store: ctx.deps.store, now: ctx.now },
      { accountId: ctx.actor.user.accountId, actor: actorLabel(ctx.actor), patterns: input.patterns },
    );
  },
});
