import { compileRedactionPatterns } from '../output';
import type { Store } from '../store/types';

/**
 * Sets an account's redaction patterns (DESIGN §7), used by the REST API and `letkite admin redaction set`. They
 * are validated first (`invalid_params` names the pattern's index, never the pattern). The audit event keeps their
 * number only: a pattern may spell out the very secret it hides.
 */
export async function saveRedactionPatterns(
  deps: { store: Store; now: Date },
  input: { accountId: string; actor: string; patterns: string[] },
): Promise<{ patterns: string[] }> {
  compileRedactionPatterns(input.patterns);
  const patterns = [...new Set(input.patterns)];
  await deps.store.setRedactionPatterns(input.accountId, patterns, {
    accountId: input.accountId,
    at: deps.now.toISOString(),
    actor: input.actor,
    action: 'redaction.set',
    target: input.accountId,
    outcome: 'ok',
    details: { count: patterns.length },
  });
  return { patterns };
}
