import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createOwnerSetupLink, openIdentityStore, openStore } from '@letkite/gateway';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { CliProcess, freePort, repoRoot, runCliCommand, waitFor } from './support/processes';

// Issue #10 item 2 and #11a/b: what `npm start` keeps (the owner token, the local agent's key and state, the
// database, the agent's own ceiling) must be out of reach of every tool an AI can call, whatever the ceiling says.

interface ExecOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;

/** Everything a refusal or a result says, as one string, to look for a leaked secret in. */
function everything(r: unknown): string {
  return JSON.stringify(r);
}

describe('npm start keeps its keys out of the AI’s reach', () => {
  // Under the home directory, like a checkout: the default ceiling makes home read-write. Made in beforeAll, so
  // a run that skips this suite leaves nothing behind.
  let base = '';
  let data = '';
  let agentDir = '';
  let ceilingPath = '';
  let start: CliProcess;
  let port = 0;
  let ownerToken = '';
  let privateKey = '';
  let owner: Client;
  let readOnly: Client;
  let machine = '';

  beforeAll(async () => {
    base = mkdtempSync(join(homedir(), '.letkite-keys-test-'));
    data = join(base, '.letkite');
    agentDir = join(data, 'agent');
    ceilingPath = join(agentDir, 'ceiling.toml');
    port = await freePort();
    start = new CliProcess(['start', '--data', data, '--port', String(port)], { LETKITE_HEARTBEAT_MS: '1000' });
    await start.waitForOutput(/Press Ctrl-C to stop/, 60_000);
    ownerToken = readFileSync(join(data, 'owner-token'), 'utf8').trim();
    privateKey = (JSON.parse(readFileSync(join(agentDir, 'agent.json'), 'utf8')) as { private_key_pem: string })
      .private_key_pem;
    const url = `http://localhost:${port}`;
    owner = await mcpClient(url, ownerToken);
    machine = await waitFor('the local agent online', async () => {
      const r = await callTool<{ machines: { name: string; online: boolean }[] }>(owner, 'machines_list', {});
      return r.data.machines.find((m) => m.online)?.name;
    });
    const gw = { dataDir: data } as unknown as TestGateway;
    readOnly = await mcpClient(
      url,
      await TestGateway.prototype.apiTokenWithGrant.call(gw, { policy: 'read-only', machines: '*', scopes: '*' }),
    );
  }, 120_000);

  afterAll(async () => {
    await owner?.close();
    await readOnly?.close();
    await start?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  test('the data directory, the agent state and every key file are private to their owner', () => {
    expect(mode(data)).toBe(0o700);
    expect(mode(agentDir)).toBe(0o700);
    for (const f of ['owner-token', 'letkite.db', 'letkite.db-wal', 'letkite.db-shm', 'secret.key']) {
      if (f.endsWith('-wal') || f.endsWith('-shm')) if (!existsSync(join(data, f))) continue;
      expect([f, mode(join(data, f))]).toEqual([f, 0o600]);
    }
    expect(mode(join(agentDir, 'agent.json'))).toBe(0o600);
    expect(mode(ceilingPath)).toBe(0o600);
  });

  test('the generated ceiling denies the data directory', () => {
    expect(readFileSync(ceilingPath, 'utf8')).toContain(JSON.stringify(data));
  });

  test('read_file of the owner token, the agent key, the database and the ceiling is refused, by any spelling', async () => {
    const targets = [
      join(data, 'owner-token'),
      join(agentDir, 'agent.json'),
      join(data, 'letkite.db'),
      join(data, 'secret.key'),
      ceilingPath,
      `${base}/./.letkite/agent/../owner-token`,
      `/proc/self/root${data}/owner-token`,
      `/proc/${start.child.pid}/root${data}/owner-token`,
      `/proc/${start.child.pid}/cwd/../../../../../../${data}/owner-token`,
    ];
    for (const path of targets) {
      for (const client of [readOnly, owner]) {
        const r = await callTool(client, 'read_file', { machine, path });
        expect([path, r.error?.code]).toEqual([path, 'blocked_by_ceiling']);
        expect(everything(r)).not.toContain(ownerToken);
        expect(everything(r)).not.toContain('PRIVATE KEY');
      }
    }
  });

  test('an ordinary file with several names (hard links) still reads', async () => {
    const linked = ['/usr/bin/bzcat', '/usr/bin/zipinfo', '/usr/bin/uncompress'].find(
      (f) => existsSync(f) && statSync(f).nlink > 1,
    );
    if (!linked) return;
    const r = await callTool(readOnly, 'read_file', { machine, path: linked, length: 16 });
    expect(r.ok, everything(r)).toBe(true);
  });

  test('the LetKite installation that runs the agent cannot be read or changed', async () => {
    const code = join(repoRoot, 'apps/agent/src/executors/launcher-client.ts');
    const before = readFileSync(code, 'utf8');
    const r = await callTool(readOnly, 'read_file', { machine, path: join(repoRoot, 'package.json') });
    expect(r.error?.code).toBe('blocked_by_ceiling');
    const w = await callTool(owner, 'write_file', { machine, path: code, content: 'process.exit(0)\n' });
    expect(w.error?.code).toBe('blocked_by_ceiling');
    const planted = join(repoRoot, 'apps/agent/src/letkite-keys-test-planted');
    await callTool<ExecOut>(owner, 'exec', { machine, command: `touch ${planted}; echo x >> ${code}` });
    expect(existsSync(planted)).toBe(false);
    expect(readFileSync(code, 'utf8')).toBe(before);
  });

  test('the gateway’s and the agent’s own /proc entries do not hand out their environment or open files', async () => {
    const r = await callTool(readOnly, 'read_file', { machine, path: `/proc/${start.child.pid}/environ` });
    expect(everything(r)).not.toContain('LETKITE_');
  });

  test('a listing leaves the protected directory out', async () => {
    const r = await callTool<{ entries: { path?: string; name?: string }[] }>(readOnly, 'list_dir', {
      machine,
      path: base,
      include_hidden: true,
    });
    expect(everything(r)).not.toContain('.letkite"');
    const inside = await callTool(readOnly, 'list_dir', { machine, path: data });
    expect(inside.error?.code).toBe('blocked_by_ceiling');
  });

  test('a sandboxed command cannot print the token, the key or the database (cat, base64, /proc/*/root)', async () => {
    const files = [join(data, 'owner-token'), join(agentDir, 'agent.json'), join(data, 'letkite.db')];
    const hashes = files.map(sha256);
    const command = [
      ...files.flatMap((f) => [`cat ${f}`, `base64 ${f}`, `sha256sum ${f}`]),
      `sha256sum /proc/${start.child.pid}/root${files[0]}`,
      `cat /proc/${start.child.pid}/environ`,
      `ls -la ${data} ${agentDir}`,
    ].join('; ');
    const r = await callTool<ExecOut>(owner, 'exec', { machine, command });
    expect(r.ok, everything(r)).toBe(true);
    const out = everything(r);
    expect(out).not.toContain(ownerToken);
    expect(out).not.toContain(Buffer.from(ownerToken).toString('base64').slice(0, 24));
    expect(out).not.toContain(privateKey.split('\n')[1]?.slice(0, 24) ?? 'never');
    expect(r.data.stdout).not.toContain('agent.json');
    expect(r.data.stdout).not.toContain('owner-token');
    for (const h of hashes) expect(out).not.toContain(h);
  });

  test('a command started inside the data directory does not read it either', async () => {
    for (const cwd of [data, agentDir]) {
      const r = await callTool<ExecOut>(owner, 'exec', { machine, command: 'cat owner-token agent.json; ls', cwd });
      expect(everything(r)).not.toContain(ownerToken);
      expect(everything(r)).not.toContain('PRIVATE KEY');
      expect(r.data.stdout ?? '').not.toContain('agent.json');
    }
  });

  test('a hard link to the token is refused by the file tools, and cannot be made from the sandbox', async () => {
    const byOwner = join(base, 'hard-link-made-outside');
    linkSync(join(data, 'owner-token'), byOwner);
    try {
      const r = await callTool(readOnly, 'read_file', { machine, path: byOwner });
      expect(r.error?.code).toBe('blocked_by_ceiling');
      expect(everything(r)).not.toContain(ownerToken);
    } finally {
      rmSync(byOwner, { force: true });
    }
    const made = join(base, 'hard-link-made-inside');
    await callTool<ExecOut>(owner, 'exec', { machine, command: `ln ${join(data, 'owner-token')} ${made}` });
    if (existsSync(made)) expect(statSync(made).ino).not.toBe(statSync(join(data, 'owner-token')).ino);
  });

  test('a symlink into the data directory placed by the AI does not open it', async () => {
    const link = join(base, 'innocent');
    const made = await callTool<ExecOut>(owner, 'exec', {
      machine,
      command: `ln -s ${join(data, 'owner-token')} ${link} && ln -s ${agentDir} ${base}/innocent-dir`,
    });
    expect(made.data.exit_code, everything(made)).toBe(0);
    for (const path of [link, `${base}/innocent-dir/agent.json`, `${base}/innocent-dir/ceiling.toml`]) {
      const r = await callTool(readOnly, 'read_file', { machine, path });
      expect([path, r.error?.code]).toEqual([path, 'blocked_by_ceiling']);
      expect(everything(r)).not.toContain(ownerToken);
    }
    const w = await callTool(owner, 'write_file', {
      machine,
      path: `${base}/innocent-dir/ceiling.toml`,
      content: 'version = 1\nshell = "full"\n',
    });
    expect(w.error?.code).toBe('blocked_by_ceiling');
  });

  test('the AI cannot rewrite its own ceiling, and commands stay sandboxed afterwards', async () => {
    const before = readFileSync(ceilingPath, 'utf8');
    const w = await callTool(owner, 'write_file', {
      machine,
      path: ceilingPath,
      content: 'version = 1\nshell = "full"\nrun_as = "root"\n',
    });
    expect(w.error?.code).toBe('blocked_by_ceiling');
    const d = await callTool(owner, 'delete_path', { machine, path: agentDir, recursive: true });
    expect(d.ok).toBe(false);
    await callTool<ExecOut>(owner, 'exec', {
      machine,
      command: `sed -i 's/^shell = .*/shell = "full"/' ${ceilingPath}; printf 'version = 1\\nshell = "full"\\n' > ${ceilingPath}; rm -rf ${agentDir}`,
    });
    expect(readFileSync(ceilingPath, 'utf8')).toBe(before);
    const escapee = '/etc/letkite-keys-test-escape';
    const after = await callTool<ExecOut>(owner, 'exec', { machine, command: `touch ${escapee}` });
    expect(existsSync(escapee)).toBe(false);
    expect(after.ok && after.data.exit_code === 0).toBe(false);
  });

  test('moving the checkout away and planting a new ceiling in its place does not widen anything', async () => {
    const moved = `${base}-moved`;
    const planted = await callTool<ExecOut>(owner, 'exec', {
      machine,
      command: `mv ${base} ${moved} && mkdir -p ${agentDir} && printf 'version = 1\\nshell = "full"\\nrun_as = "root"\\nfiles = [{ path = "*", access = "rw" }]\\n' > ${ceilingPath}`,
    });
    try {
      const escapee = '/etc/letkite-keys-test-escape2';
      const r = await callTool<ExecOut>(owner, 'exec', { machine, command: `touch ${escapee}` });
      expect(existsSync(escapee), everything([planted, r])).toBe(false);
    } finally {
      if (existsSync(moved)) {
        rmSync(base, { recursive: true, force: true });
        renameSync(moved, base);
      }
    }
  });
});

describe('an agent whose ceiling forgets its own files still protects them, with run_as = "root"', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let client: Client;
  const forgetful =
    'version = 1\nshell = "sandboxed"\nrun_as = "root"\nfiles = [{ path = "*", access = "rw" }]\ndeny = []\n';

  beforeAll(async () => {
    gw = await TestGateway.start();
    agent = await gw.addAgent('forgetful', { ceiling: forgetful });
    client = await mcpClient(gw.url, await gw.apiToken());
  });
  afterAll(async () => {
    await client?.close();
    await agent?.dispose();
    await gw?.dispose();
  });

  test('file tools refuse the state, the key and the ceiling', async () => {
    for (const path of [join(agent.stateDir, 'agent.json'), agent.ceilingPath, agent.stateDir]) {
      const r = await callTool(client, 'read_file', { machine: 'forgetful', path });
      expect([path, r.error?.code]).toEqual([path, 'blocked_by_ceiling']);
    }
    const w = await callTool(client, 'write_file', {
      machine: 'forgetful',
      path: agent.ceilingPath,
      content: 'version = 1\nshell = "full"\n',
    });
    expect(w.error?.code).toBe('blocked_by_ceiling');
  });

  test('sandboxed commands as root cannot read the key or change the ceiling', async () => {
    const key = (JSON.parse(readFileSync(join(agent.stateDir, 'agent.json'), 'utf8')) as { private_key_pem: string })
      .private_key_pem;
    const before = readFileSync(agent.ceilingPath, 'utf8');
    const r = await callTool<ExecOut>(client, 'exec', {
      machine: 'forgetful',
      command: `id -u; cat ${agent.stateDir}/agent.json; base64 ${agent.stateDir}/agent.json; sed -i 's/sandboxed/full/' ${agent.ceilingPath}; umount ${agent.stateDir}; cat ${agent.stateDir}/agent.json`,
    });
    expect(r.ok, everything(r)).toBe(true);
    expect(r.data.stdout.split('\n')[0]).toBe('0');
    expect(everything(r)).not.toContain(key.split('\n')[1]?.slice(0, 24) ?? 'never');
    expect(readFileSync(agent.ceilingPath, 'utf8')).toBe(before);
  });

  test('a ceiling the run-as account can change fails closed with the reason', async () => {
    agent.writeCeiling(forgetful.replace('run_as = "root"', 'run_as = "nobody"'));
    chownSync(agent.ceilingPath, 65534, 65534);
    const r = await callTool(client, 'exec', { machine: 'forgetful', command: 'id -un' });
    expect(r.error?.code).toBe('blocked_by_ceiling');
    chownSync(agent.ceilingPath, 0, 0);
    // The file is root's, but the directory it is in belongs to the run-as account: it could rename it away.
    chownSync(agent.stateDir, 65534, 65534);
    // The gateway refuses from the agent's last report until the next one: ask until the agent's reason shows.
    const refusedWith = (pattern: RegExp) =>
      waitFor(`a refusal matching ${pattern}`, async () => {
        const r = await callTool(client, 'exec', { machine: 'forgetful', command: 'id -un' });
        if (r.error?.code === 'blocked_by_ceiling' && pattern.test(r.error.message)) return r;
        throw new Error(everything(r));
      });
    await refusedWith(/directory .* is owned by uid 65534: the run_as account "nobody" could change its own ceiling/);
    chownSync(agent.stateDir, 0, 0);
    // A directory anyone may write (not sticky) on the path is as bad.
    chmodSync(agent.stateDir, 0o777);
    await refusedWith(/writable by uid 65534: the run_as account "nobody"/);
    chmodSync(agent.stateDir, 0o700);
    const fine = await waitFor('commands run again', async () => {
      const r = await callTool<ExecOut>(client, 'exec', { machine: 'forgetful', command: 'id -un' });
      if (r.ok) return r;
      throw new Error(everything(r));
    });
    expect(fine.data.stdout.trim(), everything(fine)).toBe('nobody');
  });
});

const PASSWORD = 'a long owner password';

/** JSON to a gateway's REST API, as the web app sends it (same origin). */
async function api(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const totpCode = (secret: string, stepsAhead = 0) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + stepsAhead * 30_000 });

/** Completes the owner setup link with a password and an authenticator app; returns the TOTP secret. */
async function onboardWithTotp(url: string, setupUrl: string): Promise<string> {
  const token = setupUrl.split('#')[1] ?? '';
  const totp = await api(url, '/api/onboard/totp', { token });
  const secret = String(totp.body.secret);
  const done = await api(url, '/api/onboard/password', {
    token,
    challenge_id: totp.body.challenge_id,
    name: 'Olivia Owner',
    email: 'olivia@example.com',
    password: PASSWORD,
    code: totpCode(secret),
  });
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  return secret;
}

/** Every byte SQLite keeps for the database (the file and its write-ahead log). */
function databaseBytes(dataDir: string): Buffer {
  const files = ['letkite.db', 'letkite.db-wal'].map((f) => join(dataDir, f)).filter((f) => existsSync(f));
  return Buffer.concat(files.map((f) => readFileSync(f)));
}

async function signInWithTotp(url: string, secret: string, stepsAhead: number): Promise<number> {
  const r = await api(url, '/api/auth/password', {
    email: 'olivia@example.com',
    password: PASSWORD,
    code: totpCode(secret, stepsAhead),
  });
  return r.status;
}

describe('TOTP seeds are sealed at rest, with a key kept apart from the database', () => {
  let gw: TestGateway;
  let secret = '';

  beforeAll(async () => {
    gw = await TestGateway.start();
    const store = await openStore(join(gw.dataDir, 'letkite.db'));
    let setupUrl = '';
    try {
      const { account, owner } = await store.bootstrap(new Date().toISOString());
      const link = await createOwnerSetupLink(
        { identity: openIdentityStore(store), now: new Date(), publicUrl: gw.url },
        { accountId: account.id, ownerId: owner.id },
      );
      setupUrl = link?.url ?? '';
    } finally {
      await store.close();
    }
    secret = await onboardWithTotp(gw.url, setupUrl);
  });
  afterAll(async () => gw?.dispose());

  test('the seed is not in the database in plaintext, and the key file is 0600 in a 0700 directory', () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const bytes = databaseBytes(gw.dataDir);
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    expect(bytes.includes(Buffer.from(Secret.fromBase32(secret).bytes))).toBe(false);
    expect(bytes.includes(Buffer.from('aes256gcm:v1:'))).toBe(true);
    expect(mode(join(gw.dataDir, 'secret.key'))).toBe(0o600);
    expect(mode(gw.dataDir)).toBe(0o700);
    for (const f of ['letkite.db', 'letkite.db-wal', 'letkite.db-shm']) {
      if (existsSync(join(gw.dataDir, f))) expect([f, mode(join(gw.dataDir, f))]).toEqual([f, 0o600]);
    }
  });

  test('password + TOTP sign-in still works', async () => {
    expect(await signInWithTotp(gw.url, secret, 1)).toBe(200);
  });

  test('a plaintext seed from before is sealed on the next start, and still signs in', async () => {
    await gw.stop();
    const db = new Database(join(gw.dataDir, 'letkite.db'));
    try {
      db.prepare('update totp_secrets set secret = ?, last_step = null').run(secret);
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    expect(databaseBytes(gw.dataDir).includes(Buffer.from(secret))).toBe(true);
    await gw.restart();
    expect(databaseBytes(gw.dataDir).includes(Buffer.from(secret))).toBe(false);
    expect(await signInWithTotp(gw.url, secret, -1)).toBe(200);
  });

  test('a bad LETKITE_SECRET_KEY is refused at start without echoing it', async () => {
    const bad = 'not-a-key-but-a-secret-value';
    const r = await runCliCommand(['gateway'], { ...gw.cliEnv, LETKITE_PORT: '0', LETKITE_SECRET_KEY: bad });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('LETKITE_SECRET_KEY');
    expect(r.stdout + r.stderr).not.toContain(bad);
  });
});

describe('the owner token is printed once', () => {
  test('at creation only; later starts say where it is kept', async () => {
    const base = mkdtempSync(join(homedir(), '.letkite-token-test-'));
    const data = join(base, '.letkite');
    try {
      const port = String(await freePort());
      const first = new CliProcess(['start', '--data', data, '--port', port]);
      await first.waitForOutput(/Press Ctrl-C to stop/, 60_000);
      await first.stop();
      const token = readFileSync(join(data, 'owner-token'), 'utf8').trim();
      expect(first.stdout).toContain(token);
      const second = new CliProcess(['start', '--data', data, '--port', port]);
      await second.waitForOutput(/Press Ctrl-C to stop/, 60_000);
      await second.stop();
      expect(second.stdout + second.stderr).not.toContain(token);
      expect(second.stdout).toContain(join(data, 'owner-token'));
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
