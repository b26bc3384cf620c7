import { LetKiteError } from '@letkite/protocol';
import type { Store } from '../types';
import { PgDatabase } from './pg-database';

/**
 * The core store on PostgreSQL (cluster mode). Domain stores (identity, oauth, approvals, …) share its
 * `database`, so a domain's change and its audit row run in one transaction.
 */
export class PgStore implements Store {
  constructor(readonly database: PgDatabase) {}

  static async open(url: string): Promise<PgStore> {
    return new PgStore(await PgDatabase.open(url));
  }

  private pending(): never {
    throw new LetKiteError('not_implemented', 'the PostgreSQL core store is being written');
  }

  bootstrap(): ReturnType<Store['bootstrap']> {
    return this.pending();
  }
  getUser(): ReturnType<Store['getUser']> {
    return this.pending();
  }
  roleOf(): ReturnType<Store['roleOf']> {
    return this.pending();
  }
  createApiToken(): ReturnType<Store['createApiToken']> {
    return this.pending();
  }
  findApiTokenByHash(): ReturnType<Store['findApiTokenByHash']> {
    return this.pending();
  }
  touchApiToken(): ReturnType<Store['touchApiToken']> {
    return this.pending();
  }
  createJoinToken(): ReturnType<Store['createJoinToken']> {
    return this.pending();
  }
  findJoinTokenByHash(): ReturnType<Store['findJoinTokenByHash']> {
    return this.pending();
  }
  enrollMachine(): ReturnType<Store['enrollMachine']> {
    return this.pending();
  }
  renameMachine(): ReturnType<Store['renameMachine']> {
    return this.pending();
  }
  getMachine(): ReturnType<Store['getMachine']> {
    return this.pending();
  }
  listMachines(): ReturnType<Store['listMachines']> {
    return this.pending();
  }
  recordAgentSeen(): ReturnType<Store['recordAgentSeen']> {
    return this.pending();
  }
  recordCeiling(): ReturnType<Store['recordCeiling']> {
    return this.pending();
  }
  getRedactionPatterns(): ReturnType<Store['getRedactionPatterns']> {
    return this.pending();
  }
  setRedactionPatterns(): ReturnType<Store['setRedactionPatterns']> {
    return this.pending();
  }
  appendAudit(): ReturnType<Store['appendAudit']> {
    return this.pending();
  }
  listAudit(): ReturnType<Store['listAudit']> {
    return this.pending();
  }
  verifyAudit(): ReturnType<Store['verifyAudit']> {
    return this.pending();
  }
  pruneAudit(): ReturnType<Store['pruneAudit']> {
    return this.pending();
  }
  getAuditRetention(): ReturnType<Store['getAuditRetention']> {
    return this.pending();
  }
  setAuditRetention(): ReturnType<Store['setAuditRetention']> {
    return this.pending();
  }
  claimTakeoverNotice(): ReturnType<Store['claimTakeoverNotice']> {
    return this.pending();
  }

  async close(): Promise<void> {
    await this.database.close();
  }
}
