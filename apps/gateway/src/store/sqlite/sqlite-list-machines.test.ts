import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createJoinToken } from '../../machines/create-join-token';
import type { Machine } from '../types';
import { SqliteStore } from './sqlite-store';

// listMachines is plain SQL with its own column aliases (not drizzle's mapping): every field must come back as
// getMachine (drizzle) returns it, revoked machines left out, ordered by name.

let dir: string;
let store: SqliteStore;
let accountId: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'letkite-list-machines-'));
  store = new SqliteStore(join(dir, 'letkite.db'));
  accountId = (await store.bootstrap('2026-01-01T00:00:00.000Z')).account.id;
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function enroll(id: string, name: string): Promise<void> {
  const jt = await createJoinToken({ store, now: new Date() }, { accountId, actor: 'test' });
  const machine: Machine = {
    id,
    accountId,
    name,
    publicKey: `pk-${id}`,
    hostname: null,
    os: null,
    osRelease: null,
    arch: null,
    agentVersion: null,
    labels: ['a', 'b c'],
    ceiling: null,
    ceilingSource: null,
    ceilingError: null,
    enrolledAt: '2026-01-02T00:00:00.000Z',
    lastSeenAt: null,
  };
  const r = await store.enrollMachine(
    jt.id,
    machine,
    { accountId, at: machine.enrolledAt, actor: 'test', action: 'machine.enroll', target: id, outcome: 'ok' },
    'refuse',
  );
  if (!r.ok) throw new Error(r.reason);
}

test('listMachines returns every field as getMachine does, by name, without revoked machines', async () => {
  await enroll('mch_b', 'zeta');
  await enroll('mch_a', 'alpha');
  await enroll('mch_c', 'mid');
  await store.recordAgentSeen('mch_a', {
    hostname: 'alpha.example',
    os: 'linux',
    osRelease: '6.8',
    arch: 'x64',
    agentVersion: '1.2.3',
    at: '2026-01-03T00:00:00.000Z',
  });
  await store.recordCeiling(
    'mch_a',
    { ceiling: { shell: 'sandboxed', files: [{ path: '~' }] }, source: 'file', error: null },
    null,
  );
  await store.recordCeiling('mch_b', { ceiling: null, source: 'error', error: 'bad toml' }, null);
  store.sqlite.prepare("UPDATE machines SET revoked_at = '2026-01-04T00:00:00.000Z' WHERE id = 'mch_c'").run();

  const list = await store.listMachines(accountId);
  expect(list.map((m) => m.id)).toEqual(['mch_a', 'mch_b']);
  expect(list).toEqual([await store.getMachine('mch_a'), await store.getMachine('mch_b')]);
  expect(list[0]).toMatchObject({
    hostname: 'alpha.example',
    osRelease: '6.8',
    agentVersion: '1.2.3',
    labels: ['a', 'b c'],
    ceiling: { shell: 'sandboxed', files: [{ path: '~' }] },
    ceilingSource: 'file',
    lastSeenAt: '2026-01-03T00:00:00.000Z',
    publicKey: 'pk-mch_a',
  });
  expect(list[1]).toMatchObject({ ceiling: null, ceilingSource: 'error', ceilingError: 'bad toml' });
  expect(await store.listMachines('acc_other')).toEqual([]);
});
