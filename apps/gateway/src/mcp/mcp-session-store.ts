/** One MCP session as the store keeps it (docs/design/coordination.md). */
export interface McpSessionRecord {
  id: string;
  credentialId: string;
  userId: string;
  accountId: string;
  clientName: string | null;
  clientVersion: string | null;
  protocolVersion: string | null;
  createdAt: string;
  lastSeenAt: string;
  closedAt: string | null;
}

/**
 * MCP sessions in the store, so any gateway serves any session id. A session is live while it is not closed and
 * was seen after the idle cut-off; everything else answers 404 (the client then initializes again).
 */
export interface McpSessionStore {
  /** Records a session handed out by `initialize`. */
  open(session: Omit<McpSessionRecord, 'lastSeenAt' | 'closedAt'>): Promise<void>;
  /**
   * The live session with this id, or null (unknown, closed, or not seen since `idleBefore`). Marks it seen at
   * `now` (written at most every `touchEveryMs`, so a busy session does not write on every request).
   */
  touch(id: string, input: { now: string; idleBefore: string; touchEveryMs: number }): Promise<McpSessionRecord | null>;
  /** Closes one session (DELETE /mcp); false when it was not open. */
  close(id: string, now: string): Promise<boolean>;
  /** Closes every open session of a credential (revocation); returns how many. */
  closeForCredential(credentialId: string, now: string): Promise<number>;
  /** Closes every open session of a person, in one account or all; returns how many. */
  closeForUser(userId: string, accountId: string | undefined, now: string): Promise<number>;
  /** Deletes rows closed, or idle, since before `before` (they answer 404 either way); returns how many. */
  prune(before: string): Promise<number>;
}
