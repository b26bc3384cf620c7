import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { McpSessionRecord, McpSessionStore } from '../../mcp/mcp-session-store';
import { PgMcpSessionStore } from '../postgres/pg-mcp-session-store';
import { SqliteMcpSessionStore } from '../sqlite/sqlite-mcp-session-store';
import { type TwoInstances, twoInstanceBackends } from './two-instance-backends';

const backends = twoInstanceBackends<McpSessionStore>({
  sqlite: (core) => new SqliteMcpSessionStore(core),
  postgres: (database) => new PgMcpSessionStore(database),
  truncate: ['mcp_sessions'],
});

const t0 = Date.parse('2026-12-01T10:00:00Z');
const at = (ms: number) => new Date(t0 + ms).toISOString();
const live = (ms: number, idleMs = 60_000) => ({ now: at(ms), idleBefore: at(ms - idleMs), touchEveryMs: 1000 });

function session(id: string, over: Partial<McpSessionRecord> = {}): Omit<McpSessionRecord, 'lastSeenAt' | 'closedAt'> {
  return {
    id,
    credentialId: 'tok_1',
    userId: 'usr_1',
    accountId: 'acc_1',
    clientName: 'Claude Code',
    clientVersion: '2.0',
    protocolVersion: '2025-06-18',
    createdAt: at(0),
    ...over,
  };
}

/** Two store instances on one database, as two gateways have. */
describe.each(backends)('McpSessionStore on $name', (backend) => {
  let t: TwoInstances<McpSessionStore>;
  beforeAll(() => backend.start(), 60_000);
  afterAll(() => backend.stop());
  beforeEach(async () => {
    t = await backend.open();
  });
  afterEach(() => backend.close());

  test('a session opened through one store is live through the other, and use keeps it from going idle', async () => {
    const { a, b } = t;
    await a.open(session('mcs_1'));
    expect(await b.touch('mcs_1', live(30_000))).toMatchObject({ clientName: 'Claude Code', lastSeenAt: at(30_000) });
    // Seen at 30 s, so still live at 80 s with a 60 s idle time (and seen again); idle 60.5 s after that.
    expect(await a.touch('mcs_1', live(80_000))).not.toBeNull();
    expect(await b.touch('mcs_1', live(80_500 + 60_000))).toBeNull();
    expect(await b.touch('mcs_unknown', live(1000))).toBeNull();
  });

  test('a touch within touchEveryMs writes nothing, and never revives a closed session', async () => {
    const { a, b } = t;
    await a.open(session('mcs_2'));
    expect((await a.touch('mcs_2', live(500)))?.lastSeenAt).toBe(at(0));
    expect((await a.touch('mcs_2', live(1500)))?.lastSeenAt).toBe(at(1500));
    expect(await b.close('mcs_2', at(2000))).toBe(true);
    expect(await b.close('mcs_2', at(2001))).toBe(false);
    expect(await a.touch('mcs_2', live(5000))).toBeNull();
  });

  test('revocation closes by credential, or by person in one account or all', async () => {
    const { a, b } = t;
    await a.open(session('mcs_t1'));
    await a.open(session('mcs_t2'));
    await a.open(session('mcs_other', { credentialId: 'tok_2' }));
    await a.open(session('mcs_acc2', { credentialId: 'tok_3', accountId: 'acc_2' }));
    await a.open(session('mcs_u2', { credentialId: 'tok_4', userId: 'usr_2' }));
    expect(await b.closeForCredential('tok_1', at(10))).toBe(2);
    expect(await a.touch('mcs_other', live(20))).not.toBeNull();
    expect(await b.closeForUser('usr_1', 'acc_1', at(30))).toBe(1);
    expect(await a.touch('mcs_acc2', live(40))).not.toBeNull();
    expect(await b.closeForUser('usr_1', undefined, at(50))).toBe(1);
    expect(await a.touch('mcs_u2', live(60))).not.toBeNull();
  });

  test('prune deletes sessions closed or idle before the cut-off only', async () => {
    const { a, b } = t;
    await a.open(session('mcs_closed'));
    await a.open(session('mcs_idle'));
    await a.open(session('mcs_recent', { createdAt: at(100_000) }));
    await a.close('mcs_closed', at(1000));
    expect(await b.prune(at(50_000))).toBe(2);
    expect(await a.touch('mcs_recent', live(100_001))).not.toBeNull();
  });

  test('a close racing a touch on the other instance wins: the session stays closed', async () => {
    const { a, b } = t;
    for (let i = 0; i < 10; i++) {
      await a.open(session(`mcs_race${i}`));
      const [closed] = await Promise.all([a.close(`mcs_race${i}`, at(2000)), b.touch(`mcs_race${i}`, live(5000))]);
      expect(closed).toBe(true);
      expect(await b.touch(`mcs_race${i}`, live(9000))).toBeNull();
      expect(await a.close(`mcs_race${i}`, at(9001))).toBe(false);
    }
  });

  test('a touch after the idle cut-off does not revive a session another instance saw as expired', async () => {
    const { a, b } = t;
    await a.open(session('mcs_idle2'));
    // Seen at 0; at 61 s with a 60 s idle time it is gone for both, whichever touches first.
    const got = await Promise.all([a.touch('mcs_idle2', live(61_000)), b.touch('mcs_idle2', live(61_000))]);
    expect(got).toEqual([null, null]);
    expect(await a.touch('mcs_idle2', live(61_500))).toBeNull();
  });

  test('revoking one credential from both instances at once closes each session once', async () => {
    const { a, b } = t;
    for (let i = 0; i < 6; i++) await a.open(session(`mcs_rev${i}`, { credentialId: 'tok_rev' }));
    const counts = await Promise.all([
      a.closeForCredential('tok_rev', at(10)),
      b.closeForCredential('tok_rev', at(11)),
    ]);
    expect(counts[0] + counts[1]).toBe(6);
  });
});
