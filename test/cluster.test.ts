import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiToken } from '../apps/gateway/src/auth/create-api-token';
import type { Grant } from '../apps/gateway/src/store/types';
import type { TestPerson } from './support/approvals';
import { totpCode } from './support/approvals';
import { TEST_NATS_URL, TestCluster } from './support/cluster';
import { callTool, machineOnline, type TestAgent, TestGateway } from './support/letkite';
import { consentJson, TestOAuthProvider, tokenRequest } from './support/oauth-client';
import { removeDir, runCliCommand, tempDir, waitFor } from './support/processes';

/**
 * Cluster mode end to end (issue #12, docs/design/cluster.md): real gateway processes on one fresh PostgreSQL
 * database and the real NATS (JetStream) on 127.0.0.1:4222 under a prefix of their own, real agents, a real MCP
 * SDK client. Gateway A holds agent `a1`, gateway B holds `b1`; clients talk to whichever gateway the case names.
 */

/** `printf` needs a human wherever it runs; everything else runs. */
const GATED = {
  name: 'cluster-gated',
  shell: 'full',
  files: [{ path: '*', access: 'rw' }],
  commands: { mode: 'shell', default: 'allow', rules: [{ match: 'printf *', verdict: 'approve' }] },
  approval: { approvers: 'connector', timeout: '10m' },
};

interface ExecOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * An MCP client whose requests go wherever `target()` says at the moment, as behind a load balancer without
 * session affinity: the session id it was given stays the same whichever gateway answers.
 */
async function movableClient(target: () => string, token: string): Promise<{ client: Client; sessionId: string }> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', target()), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      return fetch(new URL(url.pathname + url.search, target()), init);
    },
  });
  const client = new Client({ name: 'letkite-cluster-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId as string };
}

/** The REST API as a signed-in person, on any gateway (the session lives in the shared database). */
async function asPersonOn(url: string, person: TestPerson, method: string, path: string, body?: unknown) {
  const res = await fetch(new URL(path, url), {
    method,
    headers: {
      cookie: person.cookie,
      origin: url,
      'x-csrf-token': person.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('cluster mode: gateways on one PostgreSQL database and NATS', () => {
  let cluster: TestCluster;
  let a: TestGateway;
  let b: TestGateway;
  let owner: TestPerson & { accountId: string };
  let full: string;
  let gated: string;
  let a1: TestAgent;
  let b1: TestAgent;
  let viaB: Client;
  const work = tempDir('cluster-work');

  const token = async (grant: Grant, name: string) =>
    (
      await createApiToken(
        { store: cluster.store, now: new Date() },
        { accountId: owner.accountId, userId: owner.userId, name, grant, actor: 'test' },
      )
    ).token;

  beforeAll(async () => {
    // Every gateway of the cluster: the same database, NATS prefix, identity key (one data directory holds it) and
    // TOTP sealing key; each its own port and gateway id.
    cluster = await TestCluster.create();
    a = await TestGateway.start({ ...cluster.env, LETKITE_GATEWAY_ID: 'gw-a' });
    b = await TestGateway.start({ ...cluster.env, LETKITE_GATEWAY_ID: 'gw-b' });
    owner = await cluster.owner();
    full = await token({ policy: 'full', machines: '*', scopes: '*' }, 'full');
    gated = await token({ policy: GATED, machines: '*', scopes: '*' }, 'gated');
    // Joined through A and B respectively; each welcome names both gateways.
    a1 = await a.addAgent('a1');
    b1 = await b.addAgent('b1');
    viaB = (await movableClient(() => b.url, full)).client;
    await machineOnline(viaB, 'a1');
    await machineOnline(viaB, 'b1');
  }, 240_000);

  afterAll(async () => {
    await viaB?.close().catch(() => undefined);
    await a1?.dispose();
    await b1?.dispose();
    await a?.stop();
    await b?.stop();
    await cluster?.dispose();
    if (cluster) removeDir(cluster.dataDir);
    removeDir(work);
  });

  test('each gateway says who it is in /readyz, and a half-configured cluster refuses to start', async () => {
    const ready = (await (await fetch(new URL('/readyz', a.url))).json()) as { gateway: string; checks: object };
    expect(ready).toMatchObject({ gateway: 'gw-a', checks: { nats: 'ok', store: 'ok' } });
    expect(((await (await fetch(new URL('/readyz', b.url))).json()) as { gateway: string }).gateway).toBe('gw-b');
    const halfData = tempDir('cluster-half');
    for (const [env, missing] of [
      [{ LETKITE_DATABASE_URL: cluster.db.url }, 'LETKITE_NATS_URL'],
      [{ LETKITE_NATS_URL: TEST_NATS_URL }, 'LETKITE_DATABASE_URL'],
    ] as const) {
      const gateway = await runCliCommand(['gateway'], { ...env, LETKITE_PORT: '0', LETKITE_DATA: halfData });
      expect(gateway.code).not.toBe(0);
      expect(gateway.stderr).toMatch(new RegExp(`invalid_config: .*${missing}`));
      const admin = await runCliCommand(['admin', 'join-token'], { ...env, LETKITE_DATA: halfData });
      expect(admin.code).not.toBe(0);
      expect(admin.stderr).toMatch(new RegExp(`invalid_config: .*${missing}`));
    }
    removeDir(halfData);
  });

  test('an agent joined through A runs a command an MCP client asked B for, output streamed back', async () => {
    const r = await callTool<ExecOut>(viaB, 'exec', { machine: 'a1', command: 'echo "from $((40+2))"' });
    expect(r.error).toBeUndefined();
    expect(r.data).toMatchObject({ exit_code: 0, stdout: 'from 42\n' });
  });

  test('exec_many across agents held by different gateways', async () => {
    const r = await callTool<{ results: { name?: string; ok: boolean; result?: ExecOut }[]; succeeded: number }>(
      viaB,
      'exec_many',
      { machines: ['a1', 'b1'], command: 'echo many' },
    );
    expect(r.error).toBeUndefined();
    expect(r.data.succeeded).toBe(2);
    expect(r.data.results.map((x) => [x.name, x.ok, x.result?.stdout])).toEqual([
      ['a1', true, 'many\n'],
      ['b1', true, 'many\n'],
    ]);
  });

  test('a transfer between agents on different gateways arrives whole, checksum verified', async () => {
    const from = join(work, 'cross.bin');
    // Several MiB: many data frames and credit grants cross NATS both ways.
    writeFileSync(from, randomBytes(6 * 1024 * 1024 + 12345));
    const to = join(work, 'cross-copy.bin');
    const r = await callTool<{ bytes: number; sha256: string }>(
      viaB,
      'copy_between_hosts',
      { source: { machine: 'a1', path: from }, destination: { machine: 'b1', path: to } },
      { timeout: 120_000 },
    );
    expect(r.error).toBeUndefined();
    expect(r.data.sha256).toBe(sha256File(from));
    expect(sha256File(to)).toBe(sha256File(from));
  });

  test('an approval requested on A is decided through B and the call repeated on B runs once', async () => {
    const viaA = (await movableClient(() => a.url, gated)).client;
    const onB = (await movableClient(() => b.url, gated)).client;
    const log = join(work, 'approved.log');
    const call = { machine: 'b1', command: `printf s >> ${log}` };
    const pending = await callTool<{ status: string; approval_id: string }>(viaA, 'exec', call);
    expect(pending.data.status).toBe('pending_approval');
    expect(existsSync(log)).toBe(false);
    const decided = await asPersonOn(b.url, owner, 'POST', `/api/approvals/${pending.data.approval_id}/approve`, {
      method: 'totp',
      code: await totpCode(owner),
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const ran = await callTool<ExecOut>(onB, 'exec', call);
    expect(ran.error).toBeUndefined();
    expect(ran.data.exit_code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('s');
    // The approval is used up: the same call asks again instead of running twice.
    const again = await callTool<{ status: string }>(viaA, 'exec', call);
    expect(again.data.status).toBe('pending_approval');
    expect(readFileSync(log, 'utf8')).toBe('s');
    await viaA.close();
    await onB.close();
  });

  test("a client cancelling on B stops the process on A's agent", async () => {
    const pidFile = join(work, 'cancel.pid');
    const abort = new AbortController();
    const running = viaB
      .callTool(
        { name: 'exec', arguments: { machine: 'a1', command: `echo $$ > ${pidFile}; exec sleep 60`, timeout_s: 90 } },
        undefined,
        { signal: abort.signal, timeout: 120_000 },
      )
      .catch((err: unknown) => err);
    await waitFor('the command to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(alive(pid)).toBe(true);
    abort.abort();
    await running;
    await waitFor('the process on a1 to be stopped', () => !alive(pid), 15_000);
  });

  test('an authorization code redeemed on both gateways at once: exactly one wins', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:4567/callback');
    expect(await auth(provider, { serverUrl: `${a.url}/mcp` })).toBe('REDIRECT');
    const consent = await consentJson(a, owner, provider.authorizationUrl as URL, {
      groups: ['files'],
      machines: { kind: 'all' },
      policy: 'read-only',
    });
    expect(consent.status, JSON.stringify(consent.body)).toBe(200);
    const form = {
      grant_type: 'authorization_code',
      code: consent.redirectTo?.searchParams.get('code') as string,
      client_id: provider.clientInformation()?.client_id as string,
      redirect_uri: provider.redirectUrl,
      code_verifier: provider.codeVerifier(),
    };
    const answers = await Promise.all([tokenRequest(a, form), tokenRequest(b, form)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(answers.find((r) => r.status === 400)?.body.error).toBe('invalid_grant');
  });

  test('an expired approval is swept once across the cluster: one audit row', async () => {
    const viaA = (await movableClient(() => a.url, gated)).client;
    const pending = await callTool<{ status: string; approval_id: string }>(viaA, 'exec', {
      machine: 'b1',
      command: `printf e >> ${join(work, 'never.log')}`,
    });
    expect(pending.data.status).toBe('pending_approval');
    await cluster.query('UPDATE approval_requests SET expires_at = $1 WHERE id = $2', [
      new Date(Date.now() - 1000).toISOString(),
      pending.data.approval_id,
    ]);
    const expiredRows = async () =>
      (
        await cluster.query<{ n: string }>(
          "SELECT count(*) AS n FROM audit_events WHERE action = 'approval.expire' AND target = $1",
          [pending.data.approval_id],
        )
      )[0]?.n;
    // Both gateways run the sweeper every 15 s; one holds the lease, and the write is conditional anyway.
    await waitFor('the sweep', async () => (await expiredRows()) === '1', 40_000);
    await new Promise((r) => setTimeout(r, 16_000));
    expect(await expiredRows()).toBe('1');
    await viaA.close();
  }, 90_000);

  test('kill -9 of A: its agent is back on B within 10 s; session, job and pending approval carry on', async () => {
    let target = a.url;
    const { client, sessionId } = await movableClient(() => target, full);
    const gatedClient = (await movableClient(() => target, gated)).client;
    const job = await callTool<{ job_id: string }>(client, 'job_start', {
      machine: 'a1',
      command: 'echo before; sleep 3; echo after',
    });
    expect(job.error).toBeUndefined();
    const log = join(work, 'after-kill.log');
    const call = { machine: 'a1', command: `printf k >> ${log}` };
    const pending = await callTool<{ status: string; approval_id: string }>(gatedClient, 'exec', call);
    expect(pending.data.status).toBe('pending_approval');

    const killedAt = Date.now();
    await a.process?.stop('SIGKILL');
    target = b.url;
    await a1.process?.waitForOutput(new RegExp(`connected to ${b.url.replace(/[.]/g, '\\.')}`), 10_000);
    expect(Date.now() - killedAt).toBeLessThan(10_000);

    // The same MCP session id, now answered by B.
    await machineOnline(client, 'a1');
    const status = await waitFor('the job to finish', async () => {
      const s = await callTool<{ state: string }>(client, 'job_status', { machine: 'a1', job_id: job.data.job_id });
      return s.data.state === 'exited' ? s : undefined;
    });
    expect(status.error).toBeUndefined();
    const out = await callTool<{ data: string }>(client, 'job_output', { machine: 'a1', job_id: job.data.job_id });
    expect(out.data.data).toBe('before\nafter\n');
    expect(sessionId).toMatch(/^mcs_/);

    // The approval asked for on A is decided on B, and the call runs there.
    const decided = await asPersonOn(b.url, owner, 'POST', `/api/approvals/${pending.data.approval_id}/approve`, {
      method: 'totp',
      code: await totpCode(owner),
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const ran = await callTool<ExecOut>(gatedClient, 'exec', call);
    expect(ran.error).toBeUndefined();
    expect(readFileSync(log, 'utf8')).toBe('k');
    await client.close();
    await gatedClient.close();
  });

  test("a gateway's graceful shutdown sends its agents to another one at once; agents keep the list", async () => {
    // The agents know both gateways from their welcomes, in their state files too.
    const state = JSON.parse(readFileSync(join(a1.stateDir, 'agent.json'), 'utf8')) as { gateways?: string[] };
    expect(state.gateways).toEqual([b.url]);
    await a.restart();
    const mark = (agent: TestAgent) => {
      const p = agent.process as NonNullable<TestAgent['process']>;
      const from = { out: p.stdout.length, err: p.stderr.length };
      return () => p.stdout.slice(from.out) + p.stderr.slice(from.err);
    };
    const since = [mark(a1), mark(b1)];
    const stoppedAt = Date.now();
    await b.stop();
    for (const output of since) {
      await waitFor('the agent back on A', () => output().includes(`connected to ${a.url}`), 10_000);
    }
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    const viaA = (await movableClient(() => a.url, full)).client;
    await machineOnline(viaA, 'b1');
    const r = await callTool<ExecOut>(viaA, 'exec', { machine: 'b1', command: 'echo moved' });
    expect(r.data.stdout).toBe('moved\n');
    await viaA.close();
  });
});
