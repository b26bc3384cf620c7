import { randomBytes } from 'node:crypto';
import { loadCommandRules } from '@letkite/command-rules';
import {
  AccountSettingsResponse,
  PolicyListResponse,
  PolicySavedResponse,
  PolicyShowResponse,
  TestPolicyResponse,
  ValidatePolicyResponse,
} from '@letkite/protocol/api';
import { Hono } from 'hono';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { newWebSession } from '../identity/session-cookie';
import { TotpSeedCipher } from '../identity/totp-seed-cipher';
import { openPolicyStore } from '../store/open-policy-store';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { type PolicyRouteDeps, policyRoutes } from './policy-routes';

const ORIGIN = 'http://localhost:8787';

const OPS = `# the ops policy
name = "ops"
shell = "full"
files = [ { path = "/srv", access = "rw" } ]

[commands]
default = "approve"
rules = [ { match = "ls *", verdict = "allow" }, { match = "rm *", verdict = "deny" } ]
`;

describe('policies REST API', () => {
  beforeAll(async () => loadCommandRules());
  let store: SqliteStore;
  let deps: PolicyRouteDeps;
  let app: Hono;
  let accountId: string;
  let ownerId: string;
  const clock = new Date('2026-12-01T10:00:00Z');

  async function headersFor(userId: string) {
    const { session, token } = newWebSession({ userId, accountId, method: 'passkey', userAgent: null, now: clock });
    await deps.identity.createSession(session, {
      accountId,
      at: clock.toISOString(),
      actor: `user:${userId}`,
      action: 'session.create',
    });
    return { cookie: `letkite_session=${token}`, 'x-csrf-token': session.csrfToken, origin: ORIGIN };
  }

  let owner: Record<string, string>;
  async function call(method: string, path: string, body?: unknown, who = owner) {
    const res = await app.request(path, {
      method,
      headers: { 'content-type': 'application/json', ...who },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers, parsed by their schema where it matters
    return { status: res.status, body: (await res.json()) as any };
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    ({
      account: { id: accountId },
      owner: { id: ownerId },
    } = await store.bootstrap(clock.toISOString()));
    deps = {
      store,
      identity: new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32))),
      policies: openPolicyStore(store),
      now: () => clock,
      publicUrl: ORIGIN,
    };
    app = new Hono();
    app.route('/api', policyRoutes(deps));
    owner = await headersFor(ownerId);
  });
  afterEach(async () => store.close());

  async function addMember(id: string, role: 'admin' | 'member') {
    store.sqlite
      .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, NULL, ?)')
      .run(id, id, clock.toISOString());
    store.sqlite
      .prepare('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)')
      .run(accountId, id, role, clock.toISOString());
    return headersFor(id);
  }

  test('the built-ins are always listed, read-only, and their TOML parses back to the same policy', async () => {
    const list = PolicyListResponse.parse((await call('GET', '/api/policies')).body);
    expect(list.policies.map((p) => [p.name, p.builtin])).toEqual([
      ['full', true],
      ['read-only', true],
    ]);
    const { parsePolicyToml } = await import('@letkite/policy');
    for (const p of list.policies) expect(parsePolicyToml(p.source)).toEqual(p.parsed);
    expect(list.policies.find((p) => p.name === 'read-only')?.tool_groups).not.toContain('commands');
    for (const [method, path] of [
      ['PUT', '/api/policies/full'],
      ['DELETE', '/api/policies/read-only'],
    ] as const) {
      const r = await call(method, path, { source: 'name = "full"' });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
    }
    const copy = await call('POST', '/api/policies', { source: 'name = "full"\nshell = "off"\n' });
    expect(copy.body.error.code).toBe('invalid_params');
    expect(copy.body.error.details.issues[0]).toMatchObject({ path: 'name', line: 1 });
  });

  test('create, update and show keep every version; an old version can be read back', async () => {
    const created = await call('POST', '/api/policies', { source: OPS });
    expect(created.status).toBe(201);
    expect(PolicySavedResponse.parse(created.body).policy).toMatchObject({ name: 'ops', version: 1, builtin: false });
    const again = await call('POST', '/api/policies', { source: OPS });
    expect(again.body.error.code).toBe('conflict');

    const v2 = OPS.replace('"rm *", verdict = "deny"', '"rm *", verdict = "approve"');
    const updated = await call('PUT', '/api/policies/ops', { source: v2, version: 1 });
    expect(PolicySavedResponse.parse(updated.body).policy.version).toBe(2);
    const stale = await call('PUT', '/api/policies/ops', { source: OPS, version: 1 });
    expect(stale.body.error).toMatchObject({ code: 'conflict', details: { version: 2 } });
    const renamed = await call('PUT', '/api/policies/ops', { source: OPS.replace('name = "ops"', 'name = "ops2"') });
    expect(renamed.body.error.code).toBe('invalid_params');

    const shown = PolicyShowResponse.parse((await call('GET', '/api/policies/ops')).body);
    expect(shown.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(shown.versions[0]?.author).toBe(`user:${ownerId}`);
    const v1 = await call('GET', '/api/policies/ops/versions/1');
    expect(v1.body.source).toBe(OPS);
    expect((await call('GET', '/api/policies/ops/versions/9')).body.error.code).toBe('not_found');
    const audit = await store.listAudit(accountId, { limit: 10 });
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['policy.create', 'policy.update']));
  });

  test('bad TOML and invalid policies are refused with every error and its line', async () => {
    const syntax = await call('POST', '/api/policies', { source: 'name = "x"\nshell = \n' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.details.issues).toEqual([expect.objectContaining({ line: 2 })]);
    const invalid = 'name = "x"\nshell = "sometimes"\ngui = "maybe"\n[commands]\ndefualt = "allow"\n';
    const checked = ValidatePolicyResponse.parse(
      (await call('POST', '/api/policies/validate', { source: invalid })).body,
    );
    expect(checked.valid).toBe(false);
    expect(checked.issues.map((i) => [i.line, i.path])).toEqual([
      [2, 'shell'],
      [3, 'gui'],
      [5, 'commands.defualt'],
    ]);
    const saved = await call('POST', '/api/policies', { source: invalid });
    expect(saved.body.error.details.issues).toHaveLength(3);
    expect((await call('GET', '/api/policies/x')).body.error.code).toBe('not_found');
  });

  test('only policies.manage may change policies; members may list them', async () => {
    const member = await addMember('usr_m', 'member');
    expect((await call('GET', '/api/policies', undefined, member)).status).toBe(200);
    const denied = await call('POST', '/api/policies', { source: OPS }, member);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', details: { permission: 'policies.manage' } });
    const test = await call('POST', '/api/policies/test', { name: 'full', commands: ['ls'] }, member);
    expect(test.body.error.code).toBe('forbidden');
  });

  test('delete is refused while a token uses the policy, naming the token and its owner', async () => {
    await call('POST', '/api/policies', { source: OPS });
    await store.createApiToken(
      {
        id: 'tok_ci',
        accountId,
        userId: ownerId,
        name: 'ci runner',
        grant: { policy: 'ops', machines: '*', scopes: '*' },
        createdAt: clock.toISOString(),
        expiresAt: null,
        revokedAt: null,
        tokenHash: 'x',
      },
      { accountId, at: clock.toISOString(), actor: 'test', action: 'api_token.create' },
    );
    const refused = await call('DELETE', '/api/policies/ops');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('"ci runner" of owner');
    expect(refused.body.error.details.used_by).toEqual([expect.objectContaining({ id: 'tok_ci', user_id: ownerId })]);
    const shown = PolicyShowResponse.parse((await call('GET', '/api/policies/ops')).body);
    expect(shown.used_by).toHaveLength(1);
    store.sqlite.prepare("UPDATE api_tokens SET revoked_at = ? WHERE id = 'tok_ci'").run(clock.toISOString());
    expect((await call('DELETE', '/api/policies/ops')).body).toEqual({ ok: true });
    expect((await call('GET', '/api/policies/ops')).status).toBe(404);
  });

  test('the rule tester judges with the machine ceiling and names every reason', async () => {
    await call('POST', '/api/policies', { source: OPS });
    store.sqlite
      .prepare(
        `INSERT INTO machines (id, account_id, name, public_key, labels, ceiling, ceiling_source, enrolled_at)
           VALUES ('mch_1', ?, 'web1', 'k', '[]', NULL, NULL, ?)`,
      )
      .run(accountId, clock.toISOString());
    const noCeiling = TestPolicyResponse.parse(
      (
        await call('POST', '/api/policies/test', {
          name: 'ops',
          machine: 'web1',
          commands: ['ls -la', 'rm -r /srv/x', 'make'],
        })
      ).body,
    );
    expect(noCeiling.policy).toEqual({ name: 'ops', version: 1 });
    expect(noCeiling.machine).toMatchObject({ name: 'web1', ceiling: 'none' });
    expect(noCeiling.results.map((r) => r.verdict)).toEqual(['allow', 'deny', 'approve']);
    expect(noCeiling.results[1]?.reasons).toEqual(
      expect.arrayContaining([expect.objectContaining({ layer: 'rule', rule: 'rm *', verdict: 'deny' })]),
    );

    // The machine's ceiling turns commands off: the same command is denied by the ceiling layer.
    await store.recordCeiling(
      'mch_1',
      {
        ceiling: {
          version: 1,
          shell: 'off',
          files: [],
          deny: [],
          gui: 'off',
          terminals: false,
          transfers: false,
          wake: false,
          run_as: 'nobody',
        },
        source: 'file',
        error: null,
      },
      null,
    );
    const ceilingOff = TestPolicyResponse.parse(
      (await call('POST', '/api/policies/test', { name: 'ops', machine: 'mch_1', commands: ['ls -la'] })).body,
    );
    expect(ceilingOff.results[0]).toMatchObject({ verdict: 'deny', layer: 'ceiling' });

    // Unsaved TOML is judged as it stands; bad TOML is refused with its line.
    const draft = TestPolicyResponse.parse(
      (
        await call('POST', '/api/policies/test', {
          source: OPS.replace('"ls *", verdict = "allow"', '"ls *", verdict = "deny"'),
          commands: ['ls'],
        })
      ).body,
    );
    expect(draft.results[0]?.verdict).toBe('deny');
    expect(draft.policy.version).toBeNull();
    const bad = await call('POST', '/api/policies/test', { source: 'shell = [', commands: ['ls'] });
    expect(bad.body.error.details.issues[0].line).toBe(1);
    expect((await call('POST', '/api/policies/test', { name: 'nope', commands: ['ls'] })).body.error.code).toBe(
      'not_found',
    );
    expect(
      (await call('POST', '/api/policies/test', { name: 'ops', machine: 'nope', commands: ['ls'] })).body.error.code,
    ).toBe('machine_not_found');
  });

  test('account switches: owners only, partial updates, unknown tool groups refused', async () => {
    const admin = await addMember('usr_a', 'admin');
    expect((await call('GET', '/api/account/settings', undefined, admin)).body.error.code).toBe('forbidden');
    expect((await call('PUT', '/api/account/settings', { mcp_http: false }, admin)).body.error.code).toBe('forbidden');
    const initial = AccountSettingsResponse.parse((await call('GET', '/api/account/settings')).body);
    expect(initial.settings).toMatchObject({
      mcp_http: true,
      stdio_bridge: true,
      legacy_sse: false,
      disabled_tool_groups: [],
    });
    const off = AccountSettingsResponse.parse(
      (await call('PUT', '/api/account/settings', { mcp_http: false, disabled_tool_groups: ['screen'] })).body,
    );
    expect(off.settings).toMatchObject({ mcp_http: false, stdio_bridge: true, disabled_tool_groups: ['screen'] });
    const later = AccountSettingsResponse.parse(
      (await call('PUT', '/api/account/settings', { legacy_sse: true })).body,
    );
    expect(later.settings).toMatchObject({ mcp_http: false, legacy_sse: true, disabled_tool_groups: ['screen'] });
    const bad = await call('PUT', '/api/account/settings', { disabled_tool_groups: ['lasers'] });
    expect(bad.body.error.code).toBe('invalid_params');
    const unknownKey = await call('PUT', '/api/account/settings', { mcp: false });
    expect(unknownKey.body.error.code).toBe('invalid_params');
  });
});
