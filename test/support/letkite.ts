import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { createApiToken, type Grant, openStore } from '@letkite/gateway';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CliProcess, freePort, removeDir, runCliCommand, tempDir, waitFor } from './processes';

/** A ceiling that lets commands run unsandboxed as the current user (what the foundation tests exercise). */
/** `agent join` arguments that keep a root join from creating the letkite system account on the host. */
export const RUN_AS = ['--run-as', userInfo().username];

export const FULL_SHELL_CEILING = `version = 1\nshell = "full"\nrun_as = "${userInfo().username}"\nfiles = [{ path = "*", access = "rw" }]\ndeny = []\n`;

/** A real gateway process on a free port with its own data directory. */
export class TestGateway {
  process: CliProcess | null = null;
  readonly dataDir: string;
  readonly url: string;

  private constructor(
    readonly port: number,
    readonly env: Record<string, string>,
  ) {
    this.dataDir = tempDir('gw');
    this.url = `http://localhost:${port}`;
  }

  static async start(env: Record<string, string> = {}): Promise<TestGateway> {
    const gw = new TestGateway(await freePort(), env);
    await gw.restart();
    return gw;
  }

  get cliEnv(): Record<string, string> {
    return { LETKITE_DATA: this.dataDir, ...this.env };
  }

  async restart(): Promise<void> {
    await this.process?.stop();
    this.process = new CliProcess(['gateway'], {
      LETKITE_PORT: String(this.port),
      LETKITE_HEARTBEAT_MS: '1000',
      ...this.cliEnv,
    });
    // Generous: on a loaded 2-core machine tsx alone can take longer than 20 s to bring a gateway up.
    await this.process.waitForOutput(/listening on/, 60_000);
  }

  async stop(): Promise<void> {
    await this.process?.stop();
  }

  async dispose(): Promise<void> {
    await this.stop();
    removeDir(this.dataDir);
  }

  async apiToken(name = 'test', extra: string[] = []): Promise<string> {
    const r = await runCliCommand(['admin', 'token', 'create', '--name', name, ...extra], this.cliEnv);
    if (r.code !== 0) throw new Error(`token create failed: ${r.stderr}`);
    return r.stdout.trim();
  }

  /** An API token with an explicit grant (e.g. an inline policy), created through the gateway's own code. */
  async apiTokenWithGrant(grant: Grant, name = 'grant-test'): Promise<string> {
    const store = await openStore(join(this.dataDir, 'letkite.db'));
    try {
      const { account, owner } = await store.bootstrap(new Date().toISOString());
      const created = await createApiToken(
        { store, now: new Date() },
        { accountId: account.id, userId: owner.id, name, grant, actor: 'test' },
      );
      return created.token;
    } finally {
      await store.close();
    }
  }

  async joinToken(extra: string[] = []): Promise<string> {
    const r = await runCliCommand(['admin', 'join-token', ...extra], this.cliEnv);
    if (r.code !== 0) throw new Error(`join-token failed: ${r.stderr}`);
    return r.stdout.trim();
  }

  /**
   * Enrolls a new agent (its own state dir and ceiling file) and starts it. The ceiling defaults to a full shell
   * running as the current user; pass TOML to test other ceilings, or null for no file (documented defaults).
   */
  async addAgent(
    name: string,
    options: { ceiling?: string | null; env?: Record<string, string> } = {},
  ): Promise<TestAgent> {
    const stateDir = tempDir(`agent-${name}`);
    const ceilingPath = join(stateDir, 'ceiling.toml');
    const ceiling = options.ceiling === undefined ? FULL_SHELL_CEILING : options.ceiling;
    const env = { LETKITE_CEILING: ceilingPath, ...options.env };
    const token = await this.joinToken();
    const r = await runCliCommand(
      // --run-as: a root join would otherwise create the letkite system account on the host.
      ['agent', 'join', this.url, '-', '--name', name, '--state-dir', stateDir, ...RUN_AS],
      env,
      token,
    );
    if (r.code !== 0) throw new Error(`agent join failed: ${r.stderr}`);
    rmSync(ceilingPath, { force: true });
    if (ceiling !== null) writeFileSync(ceilingPath, ceiling, { mode: 0o644 });
    const agent = new TestAgent(stateDir, env, ceilingPath);
    await agent.start();
    return agent;
  }
}

/** A real agent process. */
export class TestAgent {
  process: CliProcess | null = null;
  constructor(
    readonly stateDir: string,
    readonly env: Record<string, string>,
    readonly ceilingPath: string,
  ) {}

  /** Replaces the ceiling file the way an editor does (write a new file, rename over the old one). */
  writeCeiling(text: string, mode = 0o644): void {
    const tmp = `${this.ceilingPath}.new`;
    writeFileSync(tmp, text, { mode });
    chmodSync(tmp, mode);
    renameSync(tmp, this.ceilingPath);
  }

  async start(): Promise<void> {
    this.process = new CliProcess(['agent', 'run', '--state-dir', this.stateDir], this.env);
    await this.process.waitForOutput(/connected to/);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.process?.stop(signal);
  }

  async dispose(): Promise<void> {
    await this.stop();
    removeDir(this.stateDir);
  }
}

export async function mcpClient(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'letkite-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export interface ToolOutcome<T = Record<string, unknown>> {
  ok: boolean;
  data: T;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** Calls a tool and returns either its structured result or its error payload. */
export async function callTool<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { timeout?: number } = {},
): Promise<ToolOutcome<T>> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: options.timeout ?? 60_000 });
  if (r.isError) {
    const text = (r.content as { type: string; text: string }[])[0]?.text ?? '{}';
    return { ok: false, data: {} as T, error: JSON.parse(text) };
  }
  return { ok: true, data: r.structuredContent as T };
}

export async function machineOnline(client: Client, name: string, online = true): Promise<void> {
  // An agent whose gateway was down for a while redials with full-jitter backoff capped at 30 s
  // (apps/agent/src/connection.ts): after a restart its next try may legitimately come that late.
  await waitFor(
    `machine ${name} online=${online}`,
    async () => {
      const r = await callTool<{ machines: { name: string; online: boolean }[] }>(client, 'machines_list', {});
      return r.data.machines.some((m) => m.name === name && m.online === online);
    },
    40_000,
  );
}
