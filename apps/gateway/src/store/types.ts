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

export interface AuditEventInput {
  accountId: string;
  at: string;
  actor: string;
  action: string;
  target?: string | null;
  decision?: string | null;
  outcome?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEvent extends Required<Omit<AuditEventInput, 'details'>> {
  id: number;
  details: Record<string, unknown>;
}

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
   * Atomically marks the join token used and creates the machine. Returns false (and changes nothing) if the token
   * was used meanwhile, so two racing enrollments cannot both succeed.
   */
  enrollMachine(joinTokenId: string, machine: Machine, audit: AuditEventInput): Promise<boolean>;

  getMachine(id: string): Promise<Machine | null>;
  listMachines(accountId: string): Promise<Machine[]>;
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

  appendAudit(event: AuditEventInput): Promise<void>;
  listAudit(accountId: string, options: { limit: number; action?: string }): Promise<AuditEvent[]>;

  close(): Promise<void>;
}
