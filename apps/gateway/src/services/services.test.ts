import { randomBytes } from 'node:crypto';
import { errorCodes, LetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { httpStatusOf } from '../http/error-status';
import { requestLog } from '../http/request-log';
import { permissionsOf } from '../identity/permissions';
import { newWebSession } from '../identity/session-cookie';
import { TotpSeedCipher } from '../identity/totp-seed-cipher';
import { SqliteIdentityStore } from '../store/sqlite/sqlite-identity-store';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { type Actor, actorLabel } from './actor';
import { cliContext, cliExitCodeOf, runCli } from './adapters/cli';
import { publicRoute, userRoute } from './adapters/rest';
import { actorHasPermission, defineService } from './define-service';
import { auditEvent, type ServiceContext } from './service-context';

const ORIGIN = 'http://localhost:8787';

describe('actors', () => {
  test('every actor keeps the audit spelling the free strings had', () => {
    const user = {
      userId: 'usr_1',
      accountId: 'acc_1',
      role: 'member',
      permissions: new Set<string>(),
      sessionId: 'ses_1',
      name: 'Ann',
    };
    const principal = {
      kind: 'api_token' as const,
      credentialId: 'tok_1',
      accountId: 'acc_1',
      userId: 'usr_1',
      role: 'member' as const,
      grant: { policy: 'full', machines: '*' as const, scopes: '*' as const },
      actor: 'token:tok_1',
    };
    const cases: [Actor, string][] = [
      [{ kind: 'token', id: 'tok_1', principal }, 'token:tok_1'],
      [{ kind: 'connection', id: 'con_1', principal: { ...principal, kind: 'connection' } }, 'connection:con_1'],
      [{ kind: 'user', id: 'usr_1', user }, 'user:usr_1'],
      [{ kind: 'person', id: 'usr_2' }, 'user:usr_2'],
      [{ kind: 'agent', machineId: 'mch_1' }, 'agent:mch_1'],
      [{ kind: 'join_token', id: 'jt_1' }, 'join_token:jt_1'],
      [{ kind: 'client', id: 'https://c.example/meta' }, 'client:https://c.example/meta'],
      [{ kind: 'system' }, 'system'],
      [{ kind: 'system', task: 'start' }, 'system:start'],
      [{ kind: 'cli', command: 'admin' }, 'cli:admin'],
      [{ kind: 'anonymous' }, 'anonymous'],
    ];
    for (const [actor, label] of cases) expect(actorLabel(actor)).toBe(label);
  });

  test('only people, the admin CLI and the gateway itself hold permissions; an MCP credential holds none', () => {
    const member = {
      kind: 'user' as const,
      id: 'usr_1',
      user: {
        userId: 'usr_1',
        accountId: 'acc_1',
        role: 'member',
        permissions: permissionsOf('member', null),
        sessionId: 's',
        name: 'M',
      },
    };
    expect(actorHasPermission(member, 'machines.view')).toBe(true);
    expect(actorHasPermission(member, 'members.manage')).toBe(false);
    expect(actorHasPermission({ kind: 'cli', command: 'admin' }, 'members.manage')).toBe(true);
    expect(actorHasPermission({ kind: 'system' }, 'members.manage')).toBe(true);
    expect(actorHasPermission({ kind: 'agent', machineId: 'm' }, 'machines.view')).toBe(false);
    expect(actorHasPermission({ kind: 'anonymous' }, 'machines.view')).toBe(false);
  });
});

const Rename = z.strictObject({ id: z.string().min(1), name: z.string().trim().min(1).max(20) });

/** An operation as any surface reaches it: parsed, permission-checked, run. */
const rename = defineService({
  name: 'thing.rename',
  input: Rename,
  permission: 'members.manage',
  run: async (ctx: ServiceContext<unknown>, input) => {
    if (input.id === 'missing') throw new LetKiteError('not_found', `no thing "${input.id}"`);
    return { id: input.id, name: input.name, by: actorLabel(ctx.actor), at: ctx.now.toISOString() };
  },
});

describe('defineService', () => {
  const ctx = cliContext({}, 'acc_1', new Date('2026-12-01T00:00:00Z'));

  test('parses with its schema, then runs with the typed input', async () => {
    await expect(rename.call(ctx, { id: 't1', name: '  New  ' })).resolves.toEqual({
      id: 't1',
      name: 'New',
      by: 'cli:admin',
      at: '2026-12-01T00:00:00.000Z',
    });
  });

  test('an unknown key is invalid_params naming the key; a bad value names its path', async () => {
    const unknown = await rename.call(ctx, { id: 't1', name: 'x', nmae: 'y' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(LetKiteError);
    expect((unknown as LetKiteError).code).toBe('invalid_params');
    expect((unknown as LetKiteError).message).toContain('"nmae"');
    const bad = (await rename.call(ctx, { id: '', name: 'x' }).catch((e: unknown) => e)) as LetKiteError;
    expect(bad.code).toBe('invalid_params');
    expect(bad.details?.issues).toEqual([expect.objectContaining({ path: 'id' })]);
  });

  test('a missing permission refuses before the work, also when another operation runs it typed', async () => {
    const agent: ServiceContext<unknown> = { ...ctx, actor: { kind: 'agent', machineId: 'm' } };
    await expect(rename.call(agent, { id: 't1', name: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(rename.run(agent, { id: 't1', name: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
  });

  test('the audit event names the actor, the request and the one clock reading of the operation', () => {
    expect(auditEvent(ctx, 'thing.rename', 't1', { name: 'x' })).toEqual({
      accountId: 'acc_1',
      at: '2026-12-01T00:00:00.000Z',
      actor: 'cli:admin',
      action: 'thing.rename',
      target: 't1',
      outcome: 'ok',
      details: { name: 'x' },
      requestId: ctx.requestId,
    });
    expect(() => auditEvent({ ...ctx, account: null }, 'thing.rename', null)).toThrow(TypeError);
  });
});

describe('CLI adapter', () => {
  test('every error code has an exit code; bad input is a usage error', async () => {
    expect(Object.keys(cliExitCodeOf).sort()).toEqual([...errorCodes].sort());
    const err = (await runCli(rename, cliContext({}, 'acc_1'), { id: 1 }).catch((e: unknown) => e)) as LetKiteError;
    expect(cliExitCodeOf[err.code]).toBe(2);
  });
});

describe('REST adapter', () => {
  let store: SqliteStore;
  let identity: SqliteIdentityStore;
  let app: Hono;
  let account: { id: string };
  let owner: { id: string };
  const clock = new Date('2026-11-30T10:00:00Z');

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    ({ account, owner } = await store.bootstrap(clock.toISOString()));
    identity = new SqliteIdentityStore(store, new TotpSeedCipher(randomBytes(32)));
    const deps = { store, identity, now: () => clock, publicUrl: ORIGIN };
    app = new Hono();
    app.patch('/things/:id', userRoute(deps, rename));
    app.post('/public/things', publicRoute(deps, rename, { status: 201 }));
    app.get(
      '/whoami',
      userRoute(
        deps,
        defineService({
          name: 'whoami',
          input: z.strictObject({ verbose: z.enum(['yes', 'no']).optional() }),
          run: async (ctx: ServiceContext<typeof deps, Extract<Actor, { kind: 'user' }>>, input) => ({
            user: ctx.actor.user.userId,
            account: ctx.account,
            verbose: input.verbose ?? 'no',
          }),
        }),
      ),
    );
  });
  afterEach(async () => store.close());

  async function signIn(): Promise<Record<string, string>> {
    const { session, token } = newWebSession({
      userId: owner.id,
      accountId: account.id,
      method: 'passkey',
      userAgent: null,
      now: clock,
    });
    await identity.createSession(session, {
      accountId: account.id,
      at: clock.toISOString(),
      actor: `user:${owner.id}`,
      action: 'session.create',
    });
    return { cookie: `letkite_session=${token}`, 'x-csrf-token': session.csrfToken, origin: ORIGIN };
  }

  async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const res = await app.request(path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  test('a signed-in person runs the operation with path params merged into the body', async () => {
    const headers = await signIn();
    const res = await call('PATCH', '/things/t9', headers, { name: 'Nine' });
    expect(res).toEqual({
      status: 200,
      body: { id: 't9', name: 'Nine', by: `user:${owner.id}`, at: clock.toISOString() },
    });
  });

  test("the request log's id reaches the service context and its audit event", async () => {
    const logged = new Hono();
    logged.use('*', requestLog({}));
    const deps = { store, identity, now: () => clock, publicUrl: ORIGIN };
    logged.post(
      '/audited',
      userRoute(
        deps,
        defineService({
          name: 'audited',
          input: z.strictObject({}),
          run: async (ctx: ServiceContext<typeof deps>) => ({ event: auditEvent(ctx, 'thing.audited', null) }),
        }),
      ),
    );
    const headers = await signIn();
    const res = await logged.request('/audited', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-from-proxy-1', ...headers },
      body: '{}',
    });
    expect(res.headers.get('x-request-id')).toBe('req-from-proxy-1');
    expect(((await res.json()) as { event: { requestId?: string } }).event.requestId).toBe('req-from-proxy-1');
    const fresh = await logged.request('/audited', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{}',
    });
    const made = res.headers.get('x-request-id');
    expect(((await fresh.json()) as { event: { requestId?: string } }).event.requestId).toBe(
      fresh.headers.get('x-request-id'),
    );
    expect(made).not.toBe(fresh.headers.get('x-request-id'));
  });

  test('GET reads the query string with the same strict schema', async () => {
    const headers = await signIn();
    expect((await call('GET', '/whoami?verbose=yes', headers)).body).toEqual({
      user: owner.id,
      account: account.id,
      verbose: 'yes',
    });
    const bad = await call('GET', '/whoami?verbos=yes', headers);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_params' });
  });

  test('errors map through the REST table: no session, no CSRF token, bad input, not found, no permission', async () => {
    expect((await call('PATCH', '/things/t1', { origin: ORIGIN }, { name: 'x' })).status).toBe(
      httpStatusOf.unauthenticated,
    );
    const headers = await signIn();
    const noCsrf = await call('PATCH', '/things/t1', { cookie: headers.cookie ?? '', origin: ORIGIN }, { name: 'x' });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'csrf' } });
    const bad = await call('PATCH', '/things/t1', headers, { name: '' });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'invalid_params' } } });
    const missing = await call('PATCH', '/things/missing', headers, { name: 'x' });
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  test('a public route refuses a cross-site request and has no permissions before sign-in', async () => {
    const cross = await call('POST', '/public/things', { origin: 'https://evil.example' }, { id: 't1', name: 'x' });
    expect(cross).toMatchObject({ status: 403, body: { error: { code: 'forbidden', details: { reason: 'origin' } } } });
    const anonymous = await call('POST', '/public/things', { origin: ORIGIN }, { id: 't1', name: 'x' });
    expect(anonymous).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
  });
});
