/**
 * The store interface: everything the gateway persists. SQLite implements it for the embedded mode; PostgreSQL
 * implements the same interface for cluster mode. Handlers never see SQL.
 *
 * Methods that change state take the audit event to write in the same transaction, so a change without its
 * audit record cannot happen (and a failed audit write fails the change).
 */

export const roles = ['owner', 'admin', 'member'] as const;
export type Role = (typeof roles)[number];

export interface Account {
  id: string;
  name: string;
  createdAt: string;
}

export interface User {
  id: string;
  name: string;
  email: string | null;
  createdAt: string;
}

/** What an API token or a connection may do. */
export interface Grant {
  /** Built-in policy name (`full`, `read-only`) or an inline policy object. */
  policy: string | Record<string, unknown>;
  /** Machine ids this grant reaches; `*` for every machine the creator can reach. */
  machines: '*' | string[];
  /** Tool scopes; `*` for all the creator may use. */
  scopes: '*' | string[];
}

export interface ApiToken {
  id: string;
  accountId: string;
  userId: string;
  name: string;
  grant: Grant;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface JoinToken {
  id: string;
  accountId: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  machineId: string | null;
}

export interface Machine {
  id: string;
  accountId: string;
  name: string;
  publicKey: string;
  hostname: string | null;
  os: string | null;
  osRelease: string | null;
  arch: string | null;
  agentVersion: string | null;
  labels: string[];
  ceiling: unknown;
  ceilingSource: string | null;
  ceilingError: string | null;
  enrolledAt: string;
  lastSeenAt: string | null;
}

/**
 * Who reaches which machines, as the store filters them (machines/resolve-machine.ts builds it from a principal):
 * the account's live machines, minus those claimed by groups of the account that `userId` is not in (unless
 * `seesClaimedMachines`: owners and admins), narrowed to `machineIds` unless that is `*`.
 */
export interface MachineReach {
  accountId: string;
  userId: string;
  seesClaimedMachines: boolean;
  machineIds: '*' | readonly string[];
}

/** One page of machines in (name as bytes, id) order; `nextCursor` is set when more follow. */
export interface MachinePage {
  machines: Machine[];
  nextCursor: string | null;
}

export interface AuditEventInput {
  accountId: string;
  at: string;
  actor: string;
  /** One of `auditActions` (store/audit-actions.ts), or `tool.<name>` for a tool call. */
  action: string;
  target?: string | null;
  decision?: string | null;
  outcome?: string | null;
  details?: Record<string, unknown>;
  /** The person behind the actor; derived from a `user:<id>` actor when absent. */
  userId?: string | null;
  tool?: string | null;
  machineId?: string | null;
  /** Connection or API token id; derived from a `connection:`/`token:` actor when absent. */
  credentialId?: string | null;
  clientName?: string | null;
  requestId?: string | null;
  durationMs?: number | null;
}

/** A stored audit row: every typed column, and its place in the account's hash chain. */
export interface AuditEvent {
  id: number;
  accountId: string;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  decision: string | null;
  outcome: string | null;
  details: Record<string, unknown>;
  userId: string | null;
  tool: string | null;
  machineId: string | null;
  credentialId: string | null;
  clientName: string | null;
  requestId: string | null;
  durationMs: number | null;
  prevHash: string | null;
  hash: string | null;
}

/** Filters of the activity log; every one narrows (AND). Results are newest first, by id. */
export interface AuditQuery {
  limit: number;
  /** Only rows with an id below this (the cursor of the previous page). */
  beforeId?: number;
  /** Only rows with an id above this (the live tail). */
  afterId?: number;
  /** ISO-8601, inclusive. */
  since?: string;
  /** ISO-8601, exclusive. */
  until?: string;
  action?: string;
  /** `tool.*` actions only. */
  toolCalls?: boolean;
  userId?: string;
  credentialId?: string;
  machineId?: string;
  tool?: string;
  outcome?: string;
  /** Oldest first instead (the export, the live tail). */
  ascending?: boolean;
}

/** What `verifyAudit` found: whole, or the first row where the chain breaks and why. */
export type AuditVerification =
  | { ok: true; rows: number; headId: number | null; anchorId: number | null }
  | {
      ok: false;
      rows: number;
      /** The first row that does not verify (for a deleted tail: the head row that is gone). */
      brokenId: number;
      reason: 'row_changed' | 'chain_broken' | 'head_mismatch' | 'unsealed';
      message: string;
    };

export interface AgentSeen {
  hostname: string;
  os: string;
  osRelease: string | null;
  arch: string;
  agentVersion: string;
  at: string;
}

export interface Store {
  /** Creates the default account and its owner on first run; returns them on every run. */
  bootstrap(now: string): Promise<{ account: Account; owner: User }>;

  getUser(id: string): Promise<User | null>;
  roleOf(accountId: string, userId: string): Promise<Role | null>;

  createApiToken(token: ApiToken & { tokenHash: string }, audit: AuditEventInput): Promise<void>;
  findApiTokenByHash(tokenHash: string): Promise<ApiToken | null>;
  touchApiToken(id: string, at: string): Promise<void>;

  createJoinToken(token: JoinToken & { tokenHash: string }, audit: AuditEventInput): Promise<void>;
  findJoinTokenByHash(tokenHash: string): Promise<JoinToken | null>;
  /**
   * Atomically marks the join token used and creates the machine. Refuses (and changes nothing) if the token was
   * used meanwhile, so two racing enrollments cannot both succeed. Names are unique among the account's machines
   * (letter case aside), decided in the same transaction: `suffix` gives a taken name the first free `-2`, `-3`…,
   * `refuse` fails with `name_taken`. The machine and its audit event get the final name.
   */
  enrollMachine(
    joinTokenId: string,
    machine: Machine,
    audit: AuditEventInput,
    onNameTaken: 'suffix' | 'refuse',
  ): Promise<{ ok: true; name: string } | { ok: false; reason: 'token_used' | 'name_taken' }>;
  /** Renames a machine of the account, unique as at enrollment, with its audit event in the same transaction. */
  renameMachine(
    accountId: string,
    machineId: string,
    name: string,
    audit: AuditEventInput,
  ): Promise<{ ok: true; previousName: string } | { ok: false; reason: 'not_found' | 'name_taken' }>;

  getMachine(id: string): Promise<Machine | null>;
  listMachines(accountId: string): Promise<Machine[]>;
  /**
   * The page of reachable machines after `cursor` (a `nextCursor` this method returned; null for the first page),
   * at most `limit` of them, read with the reach filter in the query so a page costs its own rows, not the fleet's.
   * A cursor is a position, not a snapshot: machines added or removed between pages appear or not where their
   * name puts them, none twice. A cursor this store did not make is `invalid_params`.
   */
  pageReachableMachines(reach: MachineReach, page: { cursor: string | null; limit: number }): Promise<MachinePage>;
  /** Every reachable machine, in the page order. */
  listReachableMachines(reach: MachineReach): Promise<Machine[]>;
  /** The reachable machines whose id or (exact) name is `ref`, in the page order: what resolving a reference reads. */
  findReachableMachines(reach: MachineReach, ref: string): Promise<Machine[]>;
  recordAgentSeen(machineId: string, seen: AgentSeen): Promise<void>;
  recordCeiling(
    machineId: string,
    report: { ceiling: unknown; source: string; error: string | null },
    audit: AuditEventInput | null,
  ): Promise<void>;

  /** The account's redaction patterns (regex sources, DESIGN §7); empty when none are set. */
  getRedactionPatterns(accountId: string): Promise<string[]>;
  /** Replaces the account's redaction patterns (already validated) and writes the audit event with them. */
  setRedactionPatterns(accountId: string, patterns: string[], audit: AuditEventInput): Promise<void>;

  /** Appends one audit row (chained: see store/sqlite/audit.ts); returns its id. */
  appendAudit(event: AuditEventInput): Promise<number>;
  listAudit(accountId: string, query: AuditQuery): Promise<AuditEvent[]>;
  /** Re-computes the account's hash chain from its anchor to its head. */
  verifyAudit(accountId: string): Promise<AuditVerification>;
  /**
   * Deletes the account's rows older than `before` and moves the chain's anchor to the last one deleted, so the
   * rest still verifies; writes `audit` (with the count) in the same transaction.
   */
  pruneAudit(accountId: string, before: string, audit: AuditEventInput): Promise<{ pruned: number }>;
  /** The account's audit retention in days (null: kept for ever). */
  getAuditRetention(accountId: string): Promise<number | null>;
  setAuditRetention(accountId: string, days: number | null, audit: AuditEventInput): Promise<void>;
  /**
   * Records that a credential changed something on a machine; true only the first time for that pair (of two
   * racing first calls exactly one gets true): the takeover notice. `audit` is written only with the claim.
   */
  claimTakeoverNotice(
    notice: { accountId: string; credentialId: string; machineId: string; userId: string; tool: string; at: string },
    audit: AuditEventInput,
  ): Promise<boolean>;

  close(): Promise<void>;
}
