import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CliProcess, freePort, removeDir, runCliCommand, tempDir, waitFor } from './processes';

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
    await this.process.waitForOutput(/listening on/);
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

  async joinToken(extra: string[] = []): Promise<string> {
    const r = await runCliCommand(['admin', 'join-token', ...extra], this.cliEnv);
    if (r.code !== 0) throw new Error(`join-token failed: ${r.stderr}`);
    return r.stdout.trim();
  }

  /** Enrolls a new agent (its own state dir) and starts it. */
  async addAgent(name: string, env: Record<string, string> = {}): Promise<TestAgent> {
    const stateDir = tempDir(`agent-${name}`);
    const token = await this.joinToken();
    const r = await runCliCommand(['agent', 'join', this.url, '-', '--name', name, '--state-dir', stateDir], env, token);
    if (r.code !== 0) throw new Error(`agent join failed: ${r.stderr}`);
    const agent = new TestAgent(stateDir, env);
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
  ) {}

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
  await waitFor(`machine ${name} online=${online}`, async () => {
    const r = await callTool<{ machines: { name: string; online: boolean }[] }>(client, 'machines_list', {});
    return r.data.machines.some((m) => m.name === name && m.online === online);
  });
}
