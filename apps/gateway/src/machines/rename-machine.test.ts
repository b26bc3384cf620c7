import { generateKeyPairSync } from 'node:crypto';
import { PROTOCOL_VERSION } from '@letkite/protocol';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { rolePermissions } from '../identity/permissions';
import type { Actor } from '../services/actor';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { createJoinToken } from './create-join-token';
import { enrollMachine } from './enroll-machine';
import { renameMachine } from './rename-machine';

const now = new Date('2026-12-01T10:00:00Z');
const publicKey = () =>
  generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

describe('machine names are unique in an account', () => {
  let store: SqliteStore;
  let accountId: string;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    ({
      account: { id: accountId },
    } = await store.bootstrap(now.toISOString()));
  });
  afterEach(async () => {
    await store.close();
  });

  async function enroll(hostname: string, name?: string) {
    const join = await createJoinToken({ store, now }, { accountId, actor: 'test' });
    return enrollMachine(
      { store, now, gatewayPublicKey: 'gw' },
      {
        join_token: join.token,
        public_key: publicKey(),
        info: { hostname, os: 'linux', arch: 'x64', version: '0.1.0', protocol: PROTOCOL_VERSION },
        ...(name === undefined ? {} : { name }),
      },
    );
  }

  const person = (role: 'admin' | 'member'): Actor => ({
    kind: 'user',
    id: `usr_${role}`,
    user: {
      userId: `usr_${role}`,
      accountId,
      role,
      permissions: new Set(rolePermissions[role]),
      sessionId: 's',
      name: role,
    },
  });
  const ctx = (actor: Actor) => ({ actor, account: accountId, deps: { store }, now, requestId: 'r' });

  test('a taken host name gets the first free suffix, in any letter case', async () => {
    expect((await enroll('vm')).name).toBe('vm');
    expect((await enroll('VM')).name).toBe('VM-2');
    expect((await enroll('vm')).name).toBe('vm-3');
    expect((await store.listMachines(accountId)).map((m) => m.name).sort()).toEqual(['VM-2', 'vm', 'vm-3']);
  });

  test('a taken --name is refused with conflict and the join token stays unused', async () => {
    await enroll('vm', 'web');
    const join = await createJoinToken({ store, now }, { accountId, actor: 'test' });
    const info = { hostname: 'x', os: 'linux', arch: 'x64', version: '0.1.0', protocol: PROTOCOL_VERSION };
    const input = { join_token: join.token, public_key: publicKey(), info };
    await expect(
      enrollMachine({ store, now, gatewayPublicKey: 'gw' }, { ...input, name: 'WEB' }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await enrollMachine({ store, now, gatewayPublicKey: 'gw' }, { ...input, name: 'db' })).name).toBe('db');
  });

  test('an admin renames (audited); a member may not; a taken or malformed name is refused', async () => {
    const { machine_id } = await enroll('vm');
    await enroll('db');
    await expect(renameMachine.call(ctx(person('member')), { id: machine_id, name: 'web' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(renameMachine.call(ctx(person('admin')), { id: machine_id, name: 'DB' })).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(renameMachine.call(ctx(person('admin')), { id: machine_id, name: '-x y' })).rejects.toMatchObject({
      code: 'invalid_params',
    });
    await expect(renameMachine.call(ctx(person('admin')), { id: 'mch_none', name: 'web' })).rejects.toMatchObject({
      code: 'machine_not_found',
    });
    expect(await renameMachine.call(ctx(person('admin')), { id: machine_id, name: 'web' })).toEqual({
      id: machine_id,
      name: 'web',
      previous_name: 'vm',
    });
    expect((await store.getMachine(machine_id))?.name).toBe('web');
    const audit = await store.listAudit(accountId, { limit: 10 });
    expect(audit.find((e) => e.action === 'machine.rename')).toMatchObject({
      actor: 'user:usr_admin',
      target: machine_id,
      details: expect.objectContaining({ name: 'web', previous_name: 'vm' }),
    });
  });
});
