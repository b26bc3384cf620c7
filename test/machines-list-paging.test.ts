import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createJoinToken, openStore } from '@letkite/gateway';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, mcpClient, TestGateway, type ToolOutcome } from './support/letkite';

// machines_list pages (issue #16): 150 machines written straight into the gateway's database (enrolling 150 agents
// would measure enrollment), read through a real gateway and the MCP SDK client.

interface Page {
  machines: { id: string; name: string; online: boolean }[];
  next_cursor: string | null;
}

const N = 150;
let gw: TestGateway;
let client: Client;
const ids: string[] = [];
const names = new Map<string, string>();

beforeAll(async () => {
  gw = await TestGateway.start();
  const store = await openStore(join(gw.dataDir, 'letkite.db'));
  try {
    const { account, owner } = await store.bootstrap(new Date().toISOString());
    for (let i = 0; i < N; i++) {
      const jt = await createJoinToken(
        { store, now: new Date() },
        { accountId: account.id, actor: `user:${owner.id}` },
      );
      const id = `mch_${randomBytes(8).toString('hex')}`;
      // Random names: the order by name is not the order of enrollment (or of ids).
      const name = `m-${randomBytes(4).toString('hex')}`;
      const at = new Date().toISOString();
      const r = await store.enrollMachine(
        jt.id,
        {
          id,
          accountId: account.id,
          name,
          publicKey: randomBytes(32).toString('base64'),
          hostname: null,
          os: null,
          osRelease: null,
          arch: null,
          agentVersion: null,
          labels: [],
          ceiling: null,
          ceilingSource: null,
          ceilingError: null,
          enrolledAt: at,
          lastSeenAt: null,
        },
        { accountId: account.id, at, actor: `user:${owner.id}`, action: 'machine.enroll', target: id, outcome: 'ok' },
        'suffix',
      );
      if (!r.ok) throw new Error(`enroll failed: ${r.reason}`);
      ids.push(id);
      names.set(id, r.name);
    }
  } finally {
    await store.close();
  }
  client = await mcpClient(gw.url, await gw.apiToken('paging'));
}, 120_000);

afterAll(async () => {
  await client?.close();
  await gw?.dispose();
});

async function page(args: Record<string, unknown>): Promise<Page> {
  const r = await callTool<Page>(client, 'machines_list', args);
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.data;
}

async function walk(limit?: number): Promise<{ pages: Page[]; all: Page['machines'] }> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const p = await page({ ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}) });
    pages.push(p);
    cursor = p.next_cursor;
  } while (cursor !== null && pages.length < 100);
  return { pages, all: pages.flatMap((p) => p.machines) };
}

const byNameThenId = (a: { name: string; id: string }, b: { name: string; id: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

describe('machines_list paging', () => {
  test('the default page is 100 machines; following next_cursor lists every machine once, in order', async () => {
    const { pages, all } = await walk();
    expect(pages.map((p) => p.machines.length)).toEqual([100, 50]);
    expect(pages.at(-1)?.next_cursor).toBeNull();
    expect(all.map((m) => m.id).sort()).toEqual([...ids].sort());
    expect(all).toEqual([...all].sort(byNameThenId));
    for (const m of all) expect(m.name).toBe(names.get(m.id));
  });

  test('a page size is honoured, also one that divides the fleet exactly', async () => {
    const { pages, all } = await walk(50);
    expect(pages.map((p) => p.machines.length)).toEqual([50, 50, 50]);
    expect(new Set(all.map((m) => m.id)).size).toBe(N);
    const big = await page({ limit: 1000 });
    expect(big.machines).toHaveLength(N);
    expect(big.next_cursor).toBeNull();
  });

  test('a limit past the maximum, a zero limit and a made-up cursor are refused', async () => {
    for (const args of [{ limit: 1001 }, { limit: 0 }, { cursor: 'not-a-cursor' }, { cursor: 'WzEsMl0' }]) {
      // Refused either as a tool error or as a protocol error (the SDK's own input validation).
      const ok = await callTool(client, 'machines_list', args).then(
        (r) => r.ok,
        () => false,
      );
      expect(ok, JSON.stringify(args)).toBe(false);
    }
    const made = await callTool(client, 'machines_list', { cursor: 'not-a-cursor' });
    expect(made.error?.code).toBe('invalid_params');
  });

  test('a cursor grants nothing: a token limited to some machines pages through only those', async () => {
    const mine = ids.slice(0, 7);
    const limited = await mcpClient(
      gw.url,
      await gw.apiTokenWithGrant({ policy: 'read-only', machines: mine, scopes: '*' }, 'paging-limited'),
    );
    try {
      const seen: string[] = [];
      // Starting from a cursor the unlimited token was given: still only the limited token's machines follow.
      const all = (await walk()).all;
      const startAfter = all.findIndex((m) => mine.includes(m.id)) - 1;
      let cursor: string | null = startAfter < 0 ? null : (await page({ limit: startAfter + 1 })).next_cursor;
      for (;;) {
        const r: ToolOutcome<Page> = await callTool<Page>(limited, 'machines_list', {
          limit: 3,
          ...(cursor ? { cursor } : {}),
        });
        expect(r.ok).toBe(true);
        expect(r.data.machines.every((m) => mine.includes(m.id))).toBe(true);
        seen.push(...r.data.machines.map((m) => m.id));
        cursor = r.data.next_cursor;
        if (cursor === null) break;
      }
      expect(seen.sort()).toEqual([...mine].sort());
      // And walked from the start with its own cursors, the same seven.
      const own: string[] = [];
      cursor = null;
      do {
        const r: ToolOutcome<Page> = await callTool<Page>(limited, 'machines_list', {
          limit: 3,
          ...(cursor ? { cursor } : {}),
        });
        own.push(...r.data.machines.map((m) => m.id));
        cursor = r.data.next_cursor;
      } while (cursor !== null);
      expect(own.sort()).toEqual([...mine].sort());
    } finally {
      await limited.close();
    }
  });

  // resolveMachine looks an id up as one row (not the whole fleet) on every call: the same reach applies.
  test('by id, a machine outside the grant is not found and one inside is resolved (offline: no agent here)', async () => {
    const limited = await mcpClient(
      gw.url,
      await gw.apiTokenWithGrant({ policy: 'read-only', machines: [ids[0] as string], scopes: '*' }, 'by-id'),
    );
    try {
      const inside = await callTool(limited, 'read_file', { machine: ids[0], path: '/etc/hostname' });
      expect(inside.error?.code).toBe('machine_offline');
      const outside = await callTool(limited, 'read_file', { machine: ids[1], path: '/etc/hostname' });
      expect(outside.error?.code).toBe('machine_not_found');
      const unknown = await callTool(limited, 'read_file', { machine: 'mch_nope', path: '/etc/hostname' });
      expect(unknown.error?.code).toBe('machine_not_found');
      const byName = await callTool(limited, 'read_file', { machine: names.get(ids[0] as string), path: '/etc/x' });
      expect(byName.error?.code).toBe('machine_offline');
    } finally {
      await limited.close();
    }
  });
});
