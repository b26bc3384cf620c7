import { canonicalJson, sha256Hex } from '@letkite/protocol';

/**
 * Canonical JSON (keys sorted at every depth, no whitespace, `undefined` dropped) and SHA-256: the one definition in
 * @letkite/protocol, which the agent also uses to recompute what an approval binds (approval-proof.ts).
 */
export { canonicalJson, sha256Hex } from '@letkite/protocol';

/**
 * Arguments left out of an approval's binding: `machine` (the binding holds the resolved machine id, so an id and
 * a unique name of the same machine are the same call) and `confirm` (the AI's acknowledgement that it showed the
 * person the command; a human approval of the exact call is stronger and lifts `confirm` as well).
 */
export const UNBOUND_ARGS = ['machine', 'confirm'] as const;

/** The canonical JSON of a call's bound arguments (what the approver sees) and its SHA-256. */
export function boundArguments(args: Record<string, unknown>): { json: string; sha256: string } {
  const bound = Object.fromEntries(
    Object.entries(args).filter(([k]) => !(UNBOUND_ARGS as readonly string[]).includes(k)),
  );
  const json = canonicalJson(bound);
  return { json, sha256: sha256Hex(json) };
}

/** The policy version an approval binds to: the SHA-256 of the resolved policy's canonical JSON. */
export function policyVersion(policy: unknown): string {
  return sha256Hex(canonicalJson(policy));
}

/**
 * The id an approval binds to when one call runs on several machines: `set_` + SHA-256 of the canonical JSON of
 * the sorted, distinct machine ids. Order and duplicates do not matter; adding or removing any machine changes it.
 */
export function machineSetId(machineIds: readonly string[]): string {
  return `set_${sha256Hex(canonicalJson([...new Set(machineIds)].sort()))}`;
}
