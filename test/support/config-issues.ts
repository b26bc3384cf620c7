import type { ConfigIssue } from '@letkite/policy';
import { isLetKiteError, type LetKiteError } from '@letkite/protocol';
import { expect } from 'vitest';

/**
 * For the policy and ceiling parsers' tests: the `invalid_params` refusal `parse` throws. Fails the test when the
 * document is accepted or refused with another error.
 */
export function refusalOf(parse: () => unknown): LetKiteError {
  try {
    parse();
  } catch (err) {
    expect(isLetKiteError(err, 'invalid_params'), String(err)).toBe(true);
    return err as LetKiteError;
  }
  throw new Error('expected the document to be refused');
}

/** The problems (`details.issues`) of the refusal `parse` throws. */
export function issuesOf(parse: () => unknown): ConfigIssue[] {
  return refusalOf(parse).details?.issues as ConfigIssue[];
}
