import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CEILING } from '@letkite/ceiling';
import { PROTOCOL_VERSION } from '@letkite/protocol';
import {
  ApiErrorBody,
  approvalEndpoints,
  connectionEndpoints,
  type Endpoint,
  type EndpointInput,
  type EndpointOutput,
  groupEndpoints,
  machineEndpoints,
  machineListEndpoints,
  memberEndpoints,
  permissionNames,
  pushEndpoints,
  requestParts,
  roleEndpoints,
  securityEndpoints,
  sessionEndpoints,
  tokenEndpoints,
} from '@letkite/protocol/api';
import { Secret, TOTP } from 'otpauth';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createApp } from './app';
import type { ApprovalRequest } from './approvals/approval-store';
import { openApprovals } from './approvals/open-approvals';
import { LocalCoordination } from './coordination/local-coordination';
import type { GatewayDeps } from './deps';
import { loadGatewayIdentity } from './hub/gateway-identity';
import { LocalHub } from './hub/local-hub';
import { permissionNames as gatewayPermissionNames } from './identity/permissions';
import { TotpSeedCipher } from './identity/totp-seed-cipher';
import { createJoinToken } from './machines/create-join-token';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { toolHandlers } from './mcp/tools';
import { createMailer } from './notify/mailer';
import { ClientDocumentFetcher } from './oauth/client-metadata-document';
import { openPolicyStore } from './store/open-policy-store';
import { SqliteIdentityStore } from './store/sqlite/sqlite-identity-store';
import { SqliteOAuthStore } from './store/sqlite/sqlite-oauth-store';
import { SqliteStore } from './store/sqlite/sqlite-store';
import { openTransferStore } from './transfers/open-transfer-store';

// Every REST answer the web app reads is parsed here with its schema from @letkite/protocol/api: a route that
// drops a field, renames one or changes its type fails this suite before the web app breaks on it.

const ORIGIN = 'http://localhost:8787';
const gatewayIdentity = loadGatewayIdentity(join(mkdtempSync(join(tmpdir(), 'letkite-contract-')), 'gateway.pem'));

interface Caller {
  userId: string;
  cookie: string;
  csrf: string;
}

describe('REST answers match their @letkite/protocol/api schemas', () => {
  let store: SqliteStore;
  let identity: SqliteIdentityStore;
  let deps: GatewayDeps;
  let app: ReturnType<typeof createApp>;
  let accountId: string;
  let owner: Caller;
  const clock = () => new Date();

  async function signedIn(userId: string): Promise<Caller> {
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    const now = clock().toISOString();
    await identity.createSession(
      {
        id: `ses_${randomBytes(9).toString('hex')}`,
        userId,
        accountId,
        csrfToken: csrf,
        method: 'passkey',
        userAgent: 'contract-test',
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        revokedAt: null,
        tokenHash: createHash('sha256').update(token).digest('hex'),
      },
      { accountId, at: now, actor: 'test', action: 'session.create' },
    );
    return { userId, cookie: `letkite_session=${token}`, csrf };
  }

  /** Calls `e` as `who` the way the web app's client does, and parses the answer with the endpoint's schema. */
  async function call<E extends Endpoint>(e: E, input: EndpointInput<E>, who = owner): Promise<EndpointOutput<E>> {
    const { method, url, body } = requestParts(e, input as Record<string, unknown>);
    const res = await app.request(url, {
      method,
      headers: {
        origin: ORIGIN,
        cookie: who.cookie,
        'x-csrf-token': who.csrf,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json: unknown = await res.json();
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${JSON.stringify(json)}`);
    const parsed = e.response.safeParse(json);
    if (!parsed.success) throw new Error(`${method} ${url} answered off-contract: ${parsed.error.message}`);
    return parsed.data as EndpointOutput<E>;
  }

  async function addMember(name: string): Promise<string> {
    const id = `usr_${randomBytes(9).toString('hex')}`;
    const now = clock().toISOString();
    store.sqlite
      .prepare('INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)')
      .run(id, name, `${name.toLowerCase()}@letkite.test`, now);
    store.sqlite
      .prepare('INSERT INTO memberships (account_id, user_id, role, created_at) VALUES (?, ?, ?, ?)')
      .run(accountId, id, 'member', now);
    return id;
  }

  async function enrollMachine(hostname: string): Promise<string> {
    const { token } = await createJoinToken({ store, now: clock() }, { accountId, actor: 'test' });
    const publicKey = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
    const res = await app.request('/agent/v1/enroll', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        join_token: token,
        public_key: publicKey.toString('base64'),
        info: { hostname, os: 'linux', arch: 'x64', version: '0.1.0', protocol: PROTOCOL_VERSION },
      }),
    });
    const { machine_id } = (await res.json()) as { machine_id: string };
    return machine_id;
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const boot = await store.bootstrap(clock().toISOString());
    accountId = boot.account.id;
    identity = new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32)));
    const coordination = new LocalCoordination();
    deps = {
      store,
      identity,
      policies: openPolicyStore(store),
      transfers: openTransferStore(store),
      mailer: createMailer({}),
      hub: new LocalHub(),
      approvals: openApprovals({
        store,
        coordination,
        mailer: createMailer({}),
        publicUrl: ORIGIN,
        now: clock,
        log: () => {},
      }),
      coordination,
      now: clock,
      log: () => {},
      publicUrl: ORIGIN,
      version: 'test',
      gatewayIdentity,
    };
    const oauth = {
      store: new SqliteOAuthStore(store),
      clientDocuments: new ClientDocumentFetcher({ allowLoopback: false }),
    };
    app = createApp({ ...deps, mcp: new McpEndpoint(deps, toolHandlers), oauth });
    owner = await signedIn(boot.owner.id);
  });
  afterEach(async () => store.close());

  test('the contract names the same permissions as the gateway', () => {
    expect([...permissionNames].sort()).toEqual([...gatewayPermissionNames].sort());
  });

  test('session and machines, with a reported ceiling', async () => {
    const session = await call(sessionEndpoints.get, {});
    expect(session.user?.id).toBe(owner.userId);
    expect(session.csrf_token).toBe(owner.csrf);

    const join = await call(machineListEndpoints.enroll, {});
    expect(join.command).toBe(`curl -fsSL ${ORIGIN}/agent/install.sh | sudo sh -s -- ${join.token}`);
    const machineId = await enrollMachine('build-box');
    await store.recordCeiling(machineId, { ceiling: DEFAULT_CEILING, source: 'defaults', error: null }, null);
    const { machines } = await call(machineListEndpoints.list, {});
    expect(machines).toHaveLength(1);
    expect(machines[0]).toMatchObject({ id: machineId, online: false, ceiling_source: 'defaults' });
    expect(machines[0]?.ceiling?.shell).toBe('sandboxed');

    const renamed = await call(machineEndpoints.rename, { id: machineId, name: 'build-2' });
    expect(renamed).toEqual({ id: machineId, name: 'build-2', previous_name: 'build-box' });
    expect((await call(machineListEndpoints.list, {})).machines[0]?.name).toBe('build-2');
  });

  test('members, invitations, custom roles and groups', async () => {
    const role = await call(roleEndpoints.create, { name: 'approver', permissions: ['approvals.decide'] });
    const updated = await call(roleEndpoints.update, {
      id: role.id,
      name: 'approver',
      permissions: ['approvals.decide', 'audit.read'],
    });
    expect(updated.permissions).toEqual(['approvals.decide', 'audit.read']);
    const roles = await call(roleEndpoints.list, {});
    expect(roles.roles.map((r) => r.name)).toEqual(['approver']);
    expect(roles.permissions).toContain('members.manage');

    const invited = await call(memberEndpoints.invite, { email: 'ivy@letkite.test', role: 'member' });
    expect(invited.sent).toBe(false);
    expect(invited.link).toMatch(/\/invite#lkinv_/);

    const memberId = await addMember('Max');
    await call(memberEndpoints.changeRole, { user_id: memberId, role: 'member', custom_role_id: role.id });
    const list = await call(memberEndpoints.list, {});
    expect(list.members.find((m) => m.id === memberId)?.custom_role).toEqual({ id: role.id, name: 'approver' });
    expect(list.invitations.map((i) => i.email)).toEqual(['ivy@letkite.test']);
    await call(memberEndpoints.withdrawInvitation, { id: invited.id });

    await call(roleEndpoints.remove, { id: role.id });
    await call(memberEndpoints.remove, { user_id: memberId });
  });

  // Groups answer in the API's snake_case (REVIEW §2.3-3: the store's camelCase leaked here before).
  test('groups: create, update, list, and the machines they claim', async () => {
    const memberId = await addMember('Max');
    const machineId = await enrollMachine('secret-box');
    const group = await call(groupEndpoints.create, { name: 'ops', member_ids: [memberId], machine_ids: [machineId] });
    expect(group).toMatchObject({ name: 'ops', member_ids: [memberId], machine_ids: [machineId] });
    await call(groupEndpoints.update, { id: group.id, name: 'ops', member_ids: [], machine_ids: [machineId] });
    const groups = await call(groupEndpoints.list, {});
    expect(groups.groups).toEqual([{ id: group.id, name: 'ops', member_ids: [], machine_ids: [machineId] }]);
    const machines = await call(machineListEndpoints.list, {});
    expect(machines.machines[0]?.claimed_by).toEqual([{ id: group.id, name: 'ops' }]);
    await call(groupEndpoints.remove, { id: group.id });
    expect((await call(groupEndpoints.list, {})).groups).toEqual([]);
  });

  test('API tokens and tool groups', async () => {
    const groups = await call(tokenEndpoints.toolGroups, {});
    expect(groups.base_tools).toContain('machines_list');
    const commands = groups.groups.find((g) => g.name === 'commands');
    expect(commands?.tools).toContain('exec');
    const created = await call(tokenEndpoints.create, {
      name: 'ci',
      policy: 'full',
      machines: '*',
      scopes: [...groups.base_tools, ...(commands?.tools ?? [])],
      expires: '30d',
    });
    expect(created.token.length).toBeGreaterThan(20);
    const { tokens } = await call(tokenEndpoints.list, {});
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ id: created.id, name: 'ci', revoked_at: null, grant: { policy: 'full' } });
    // The secret is in the creation answer only.
    expect(JSON.stringify(tokens)).not.toContain(created.token);
    await call(tokenEndpoints.revoke, { id: created.id });
    expect((await call(tokenEndpoints.list, {})).tokens[0]?.revoked_at).not.toBeNull();
    expect((await call(connectionEndpoints.list, {})).connections).toEqual([]);
    // A group the account switched off is not offered to a new token at all.
    await deps.policies.saveSettings(
      accountId,
      { mcpHttp: true, stdioBridge: true, legacySse: false, disabledToolGroups: ['commands'] },
      { accountId, at: clock().toISOString(), actor: 'test', action: 'account.settings', outcome: 'ok' },
    );
    const offered = await call(tokenEndpoints.toolGroups, {});
    expect(offered.groups.map((g) => g.name)).not.toContain('commands');
    expect(offered.groups.length).toBe(groups.groups.length - 1);
  });

  test('approvals: list, one request, deny; push key', async () => {
    const machineId = await enrollMachine('db-1');
    const memberId = await addMember('Rita');
    const now = clock();
    const request: ApprovalRequest = {
      id: `apr_${randomBytes(6).toString('hex')}`,
      accountId,
      credentialId: 'tok_contract',
      tool: 'exec',
      machineId,
      argsHash: 'a'.repeat(64),
      policyHash: 'b'.repeat(64),
      requesterId: memberId,
      clientName: 'Claude\u202Egnp.exe',
      machineName: 'db-1',
      args: JSON.stringify({ command: 'systemctl restart postgres' }),
      policyName: 'ops',
      reason: { kind: 'policy_tool', policy: 'ops', tool: 'exec' },
      approvers: 'connector',
      askedUserIds: [owner.userId],
      status: 'pending',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 600_000).toISOString(),
      decidedAt: null,
      decidedBy: null,
      decidedWith: null,
      usedAt: null,
      proofBinding: null,
      passkeyOnly: false,
      assertion: null,
    };
    const gated = await deps.approvals.store.gate(request, request, 20, clock().toISOString());
    expect(gated.kind).toBe('pending');

    const pending = await call(approvalEndpoints.list, { status: 'pending' });
    expect(pending.approvals.map((a) => a.id)).toEqual([request.id]);
    expect(pending.approvals[0]).toMatchObject({
      tool: 'exec',
      machine: { id: machineId, name: 'db-1' },
      args: { command: 'systemctl restart postgres' },
      requester: { id: memberId, name: 'Rita' },
      can_decide: true,
    });
    const one = await call(approvalEndpoints.get, { id: request.id });
    expect(one.approval.client_name_declared).toBe('Claude\u202Egnp.exe');
    const denied = await call(approvalEndpoints.deny, { id: request.id });
    expect(denied.approval.status).toBe('denied');
    expect((await call(approvalEndpoints.list, { status: 'pending' })).approvals).toEqual([]);
    expect((await call(approvalEndpoints.list, {})).approvals).toHaveLength(1);

    const key = await call(pushEndpoints.vapidPublicKey, {});
    expect(key.public_key.length).toBeGreaterThan(40);
  });

  test('security: password + TOTP, recovery codes, passkeys and web sessions', async () => {
    const begin = await call(securityEndpoints.beginPassword, {});
    const code = TOTP.generate({ secret: Secret.fromBase32(begin.secret), timestamp: Date.now() });
    const set = await call(securityEndpoints.setPassword, {
      challenge_id: begin.challenge_id,
      password: 'a long enough password',
      code,
    });
    expect(set.recovery_codes.length).toBeGreaterThan(5);
    const session = await call(sessionEndpoints.get, {});
    expect(session.credentials).toMatchObject({ password: true, recovery_codes_left: set.recovery_codes.length });

    // The setup used this step's code; the next step's is inside the accepted window and unused.
    const next = TOTP.generate({ secret: Secret.fromBase32(begin.secret), timestamp: Date.now() + 30_000 });
    const fresh = await call(securityEndpoints.regenerateRecoveryCodes, { code: next });
    expect(fresh.recovery_codes).not.toContain(set.recovery_codes[0]);

    expect((await call(securityEndpoints.passkeys, {})).passkeys).toEqual([]);
    const options = await call(securityEndpoints.passkeyOptions, {});
    expect(options.options.challenge.length).toBeGreaterThan(10);

    const other = await signedIn(owner.userId);
    const sessions = await call(securityEndpoints.sessions, {});
    expect(sessions.sessions.filter((s) => s.current)).toHaveLength(1);
    const otherRow = sessions.sessions.find((s) => !s.current);
    expect(otherRow).toBeDefined();
    const revoked = await call(securityEndpoints.revokeSession, { id: otherRow?.id ?? '' });
    expect(revoked.closed_mcp_sessions).toBe(0);
    const refused = await app.request('/api/session', { headers: { cookie: other.cookie } });
    expect(((await refused.json()) as { user: unknown }).user).toBeNull();

    // Without a passkey the password is the only way in, so removing it is refused with the contract's error body.
    await expect(call(securityEndpoints.removePassword, {})).rejects.toThrow(/409.*"code":"conflict"/);
  });

  test('a refused call answers the error body of the contract', async () => {
    const res = await app.request('/api/members/usr_nobody', {
      method: 'DELETE',
      headers: { origin: ORIGIN, cookie: owner.cookie, 'x-csrf-token': owner.csrf },
    });
    expect(res.status).toBe(404);
    expect(ApiErrorBody.parse(await res.json()).error.code).toBe('not_found');
  });
});
