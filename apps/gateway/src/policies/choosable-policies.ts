import { parsePolicy } from '@letkite/policy';
import { LetKiteError } from '@letkite/protocol';
import { type ToolGroup, toolGroupNames } from '../oauth/scopes';
import type { PolicyStore } from '../store/policy-store';
import { builtinViews, toolGroupsOf } from './policy-views';

/** A policy a person can give a connection or token, with the tool groups it can use in this account. */
export interface ChoosablePolicy {
  name: string;
  builtin: boolean;
  /** Groups the policy can ever use, minus those the account switched off: the only ones worth offering. */
  toolGroups: ToolGroup[];
}

/**
 * The policies the consent page and the token form offer: the built-ins, then the account's own. Each carries the
 * tool groups it can use, so a form offers only groups that exist, the policy can use and the account allows.
 */
export async function choosablePolicies(
  policies: Pick<PolicyStore, 'list' | 'settings'>,
  accountId: string,
): Promise<ChoosablePolicy[]> {
  const [stored, settings] = await Promise.all([policies.list(accountId), policies.settings(accountId)]);
  const off = new Set(settings.disabledToolGroups);
  const usable = (groups: string[]) => toolGroupNames.filter((g) => groups.includes(g) && !off.has(g));
  return [
    ...builtinViews().map((b) => ({ name: b.name, builtin: true, toolGroups: usable(b.tool_groups) })),
    ...stored.map((p) => ({ name: p.name, builtin: false, toolGroups: usable(toolGroupsOf(parsePolicy(p.parsed))) })),
  ];
}

/** The chosen policy among the choosable ones, or `invalid_params` naming it. */
export function choosePolicy(choosable: readonly ChoosablePolicy[], name: string | undefined): ChoosablePolicy {
  const found = choosable.find((p) => p.name === name);
  if (!found) {
    throw new LetKiteError('invalid_params', `unknown policy "${name ?? ''}"`, {
      policy: name ?? null,
      choices: choosable.map((p) => p.name),
    });
  }
  return found;
}
