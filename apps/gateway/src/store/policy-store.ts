import type { AuditEventInput } from './types';

/**
 * The policies domain (docs/design/account-policies.md): the account's own policies with every revision, and the
 * account switches. SQLite implements it (store/sqlite/sqlite-policy-store.ts); cluster mode implements the same.
 * Every change takes the audit event to write in its own transaction.
 */

/** One revision of a stored policy. `parsed` is the validated policy (defaults applied) as saved. */
export interface PolicyRevision {
  name: string;
  version: number;
  source: string;
  parsed: Record<string, unknown>;
  author: string;
  at: string;
}

/** A stored policy: its current revision plus when it was first created and by whom. */
export interface StoredPolicy extends PolicyRevision {
  accountId: string;
  createdAt: string;
  createdBy: string;
}

/** Who still uses a policy: live grants of API tokens and OAuth connections that name it. */
export interface PolicyUse {
  kind: 'api_token' | 'connection';
  id: string;
  /** The token's name or the connection's declared client name. */
  label: string;
  userId: string;
  userName: string;
}

/** The account switches: transports and tool groups turned off for the whole account. */
export interface AccountSettings {
  mcpHttp: boolean;
  stdioBridge: boolean;
  legacySse: boolean;
  /** Tool groups (OAuth scope names) no connection of the account may use. */
  disabledToolGroups: string[];
  updatedAt: string | null;
  updatedBy: string | null;
}

/**
 * The switches of an account that never changed them: everything on, as before switches existed — except the
 * legacy HTTP+SSE transport, which an owner turns on only for a client that needs it (issue #15).
 */
export const DEFAULT_ACCOUNT_SETTINGS: AccountSettings = Object.freeze({
  mcpHttp: true,
  stdioBridge: true,
  legacySse: false,
  disabledToolGroups: [],
  updatedAt: null,
  updatedBy: null,
}) as AccountSettings;

export interface PolicyStore {
  list(accountId: string): Promise<StoredPolicy[]>;
  get(accountId: string, name: string): Promise<StoredPolicy | null>;
  /** Every revision, newest first. */
  versions(accountId: string, name: string): Promise<PolicyRevision[]>;
  version(accountId: string, name: string, version: number): Promise<PolicyRevision | null>;
  /** Creates version 1; false (and nothing written) when the name is taken. */
  create(accountId: string, revision: Omit<PolicyRevision, 'version'>, audit: AuditEventInput): Promise<boolean>;
  /**
   * Saves a new revision and returns its number; null when there is no such policy, or when `expectedVersion` is
   * given and is not the current one (someone saved in between).
   */
  update(
    accountId: string,
    revision: Omit<PolicyRevision, 'version'>,
    expectedVersion: number | undefined,
    audit: AuditEventInput,
  ): Promise<number | null>;
  /**
   * Deletes a policy and its revisions unless a live token or connection names it. Returns the users (empty when
   * deleted), or null when there is no such policy. The check and the delete are one transaction; `audit.at` is
   * the time tokens are judged expired at.
   */
  delete(accountId: string, name: string, audit: AuditEventInput): Promise<PolicyUse[] | null>;
  /** Live (not revoked, not expired at `now`) API tokens and connections whose grant names this policy. */
  usesOf(accountId: string, name: string, now: string): Promise<PolicyUse[]>;

  /** The account's switches; the defaults when it never set any. */
  settings(accountId: string): Promise<AccountSettings>;
  saveSettings(
    accountId: string,
    settings: Omit<AccountSettings, 'updatedAt' | 'updatedBy'>,
    audit: AuditEventInput,
  ): Promise<AccountSettings>;
}

/** A `policies` row as both dialects read it (store/sqlite and store/postgres policies-schema.ts are twins). */
export interface PolicyRow {
  accountId: string;
  name: string;
  version: number;
  source: string;
  parsed: string;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

/** A `policy_versions` row as both dialects read it. */
export interface PolicyVersionRow {
  name: string;
  version: number;
  source: string;
  parsed: string;
  author: string;
  at: string;
}

export function storedFromRow(r: PolicyRow): StoredPolicy {
  return {
    accountId: r.accountId,
    name: r.name,
    version: r.version,
    source: r.source,
    parsed: JSON.parse(r.parsed) as Record<string, unknown>,
    author: r.updatedBy,
    at: r.updatedAt,
    createdAt: r.createdAt,
    createdBy: r.createdBy,
  };
}

export function revisionFromRow(r: PolicyVersionRow): PolicyRevision {
  return {
    name: r.name,
    version: r.version,
    source: r.source,
    parsed: JSON.parse(r.parsed) as Record<string, unknown>,
    author: r.author,
    at: r.at,
  };
}

/** An `account_settings` row as both dialects read and write it (the tool groups as JSON text). */
export interface AccountSettingsRow {
  accountId: string;
  mcpHttp: boolean;
  stdioBridge: boolean;
  legacySse: boolean;
  disabledToolGroups: string;
  updatedAt: string;
  updatedBy: string;
}

/** The switches a row holds; the defaults when the account has none. */
export function settingsFromRow(r: AccountSettingsRow | undefined): AccountSettings {
  if (!r) return { ...DEFAULT_ACCOUNT_SETTINGS, disabledToolGroups: [] };
  return {
    mcpHttp: r.mcpHttp,
    stdioBridge: r.stdioBridge,
    legacySse: r.legacySse,
    disabledToolGroups: JSON.parse(r.disabledToolGroups) as string[],
    updatedAt: r.updatedAt,
    updatedBy: r.updatedBy,
  };
}

/** The row a save writes: tool groups once each and sorted, stamped with the audit event's time and actor. */
export function settingsToRow(
  accountId: string,
  s: Omit<AccountSettings, 'updatedAt' | 'updatedBy'>,
  audit: AuditEventInput,
): AccountSettingsRow {
  return {
    accountId,
    mcpHttp: s.mcpHttp,
    stdioBridge: s.stdioBridge,
    legacySse: s.legacySse,
    disabledToolGroups: JSON.stringify([...new Set(s.disabledToolGroups)].sort()),
    updatedAt: audit.at,
    updatedBy: audit.actor,
  };
}

/** The `policies` row a create writes: version 1, created and last updated by the revision's author. */
export function newPolicyRow(accountId: string, rev: Omit<PolicyRevision, 'version'>): PolicyRow {
  return {
    accountId,
    name: rev.name,
    version: 1,
    source: rev.source,
    parsed: JSON.stringify(rev.parsed),
    createdAt: rev.at,
    createdBy: rev.author,
    updatedAt: rev.at,
    updatedBy: rev.author,
  };
}

/** The `policy_versions` row of revision `version`. */
export function revisionToRow(
  accountId: string,
  rev: Omit<PolicyRevision, 'version'>,
  version: number,
): PolicyVersionRow & { accountId: string } {
  return {
    accountId,
    name: rev.name,
    version,
    source: rev.source,
    parsed: JSON.stringify(rev.parsed),
    author: rev.author,
    at: rev.at,
  };
}

/** A row of either dialect's in-use query (snake_case, as the raw SQL names them; a type, so it is a record). */
export type PolicyUseRow = {
  kind: PolicyUse['kind'];
  id: string;
  label: string | null;
  user_id: string;
  user_name: string;
};

export function useFromRow(r: PolicyUseRow): PolicyUse {
  return { kind: r.kind, id: r.id, label: r.label ?? r.id, userId: r.user_id, userName: r.user_name };
}
