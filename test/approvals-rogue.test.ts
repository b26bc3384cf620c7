import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callTool, FULL_SHELL_CEILING, mcpClient, TestGateway } from './support/letkite';
import { bindingFor, TestPasskey } from './support/passkey-signer';
import { CliProcess, removeDir, tempDir, waitFor } from './support/processes';
import { type RogueAnswer, RogueGateway } from './support/rogue-gateway';

const user = userInfo().username;
const MACHINE = 'mch_rogue_target';

const codeOf = (a: RogueAnswer) => (a.ok ? 'ok' : `${a.error?.code}:${String(a.error?.details?.reason ?? '')}`);

/** A real agent process driven by a compromised gateway, with a ceiling of its own. */
async function rogueAgent(ceiling: (work: string) => string) {
  const rogue = await RogueGateway.start();
  const stateDir = tempDir('rogue-approvals');
  const work = tempDir('rogue-approvals-work');
  writeFileSync(join(stateDir, 'agent.json'), JSON.stringify(rogue.agentState(MACHINE)), { mode: 0o600 });
  const ceilingPath = join(tempDir('rogue-approvals-ceiling'), 'ceiling.toml');
  writeFileSync(ceilingPath, ceiling(work), { mode: 0o644 });
  const agent = new CliProcess(['agent', 'run', '--state-dir', stateDir, '--ceiling', ceilingPath]);
  await rogue.connected();
  return {
    rogue,
    work,
    stateDir,
    async dispose() {
      await agent.stop();
      await rogue.close();
      removeDir(stateDir);
      removeDir(work);
    },
  };
}

describe('a compromised gateway cannot forge the approvals a machine verifies itself', () => {
  const petra = TestPasskey.create('ES256');
  const stranger = TestPasskey.create('ES256');
  let env: Awaited<ReturnType<typeof rogueAgent>>;
  const policy = {
    name: 'evil',
    shell: 'full',
    files: [{ path: '*', access: 'rw' }],
    commands: { default: 'allow' },
    approval: { tools: ['write_file'] },
  };

  beforeAll(async () => {
    env = await rogueAgent((work) =>
      [
        'version = 1',
        'shell = "full"',
        `run_as = "${user}"`,
        `files = [{ path = "${work}", access = "rw" }]`,
        'rules = [ { match = "touch *", verdict = "approve" } ]',
        `approvers = [ ${petra.approverToml('Petra')} ]`,
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await env?.dispose();
  });

  const execParams = (command: string) => ({ command, timeout_ms: 5000, max_output_bytes: 10_000 });
  const proofFor = (params: unknown, extra: Partial<Parameters<typeof bindingFor>[0]> = {}) =>
    petra.prove(bindingFor({ machineId: MACHINE, op: 'exec', params, policy, ...extra }));

  test('the gateway saying approved does not pass a ceiling approve rule', async () => {
    const marker = join(env.work, 'approved-by-boolean');
    const r = await env.rogue.request('exec', execParams(`touch ${marker}`), { policy, approved: true, confirm: true });
    expect(codeOf(r)).toBe('blocked_by_ceiling:approval_not_verified');
    expect(existsSync(marker)).toBe(false);
  });

  test('forged proofs are refused, each with its reason, and nothing runs', async () => {
    const marker = join(env.work, 'forged');
    const params = execParams(`touch ${marker}`);
    const otherParams = execParams(`touch ${join(env.work, 'harmless')}`);
    const past = new Date(Date.now() - 1000);
    const attempts: [string, unknown, string][] = [
      [
        'an unpinned key',
        stranger.prove(bindingFor({ machineId: MACHINE, op: 'exec', params, policy })),
        'unknown_approver',
      ],
      [
        'another key under the pinned credential id',
        stranger.prove(bindingFor({ machineId: MACHINE, op: 'exec', params, policy }), {
          credentialId: petra.credentialId,
        }),
        'signature',
      ],
      ['the right key over another command', proofFor(otherParams), 'other_request'],
      ['an expired approval', proofFor(params, { expiresAt: past }), 'expired'],
      [
        "another machine's approval",
        petra.prove(bindingFor({ machineId: 'mch_other', op: 'exec', params, policy })),
        'other_machine',
      ],
      [
        'another policy',
        petra.prove(bindingFor({ machineId: MACHINE, op: 'exec', params, policy: 'full' })),
        'other_policy',
      ],
      ['a job_start approval used for exec', proofFor(params, { op: 'job_start' }), 'other_request'],
    ];
    for (const [what, proof, reason] of attempts) {
      const r = await env.rogue.request('exec', params, {
        policy,
        approved: true,
        confirm: true,
        approval_proof: proof,
      });
      expect(`${what}: ${codeOf(r)}`).toBe(
        `${what}: ${reason === 'expired' ? 'approval_expired' : 'blocked_by_ceiling'}:${reason}`,
      );
    }
    expect(existsSync(marker)).toBe(false);
  });

  test('a good proof runs its call once; replayed it runs nothing', async () => {
    const count = join(env.work, 'count');
    const params = execParams(`touch ${join(env.work, 'once')} && echo ran >> ${count}`);
    const proof = proofFor(params);
    const first = await env.rogue.request('exec', params, { policy, approval_proof: proof });
    expect(codeOf(first)).toBe('ok');
    const again = await env.rogue.request('exec', params, { policy, approved: true, approval_proof: proof });
    expect(codeOf(again)).toBe('blocked_by_ceiling:replayed');
    expect(readFileSync(count, 'utf8')).toBe('ran\n');
    // The used id is on disk in the agent's state, kept until the approval expires.
    expect(readFileSync(join(env.stateDir, 'used-approvals.json'), 'utf8')).toContain(proof.binding.approval_id);
  });

  test("with approvers pinned, the policy's approval.tools need a verified approval too", async () => {
    const path = join(env.work, 'gated.txt');
    writeFileSync(path, 'original');
    const params = { path, content: 'changed' };
    const byWord = await env.rogue.request('write_file', params, { policy, approved: true, confirm: true });
    expect(codeOf(byWord)).toBe('blocked_by_ceiling:approval_not_verified');
    const forged = await env.rogue.request('write_file', params, {
      policy,
      approved: true,
      approval_proof: stranger.prove(bindingFor({ machineId: MACHINE, op: 'write_file', params, policy })),
    });
    expect(codeOf(forged)).toBe('blocked_by_ceiling:unknown_approver');
    expect(readFileSync(path, 'utf8')).toBe('original');
    const proof = petra.prove(bindingFor({ machineId: MACHINE, op: 'write_file', params, policy }));
    expect(codeOf(await env.rogue.request('write_file', params, { policy, approval_proof: proof }))).toBe('ok');
    expect(readFileSync(path, 'utf8')).toBe('changed');
  });
});

describe('a ceiling approve rule with no approvers pinned cannot be satisfied at all', () => {
  test('approved: true and any proof are refused, saying why', async () => {
    const somebody = TestPasskey.create('EdDSA');
    const env = await rogueAgent((work) =>
      [
        'version = 1',
        'shell = "full"',
        `run_as = "${user}"`,
        `files = [{ path = "${work}", access = "rw" }]`,
        'rules = [ { match = "touch *", verdict = "approve" } ]',
        '',
      ].join('\n'),
    );
    try {
      const marker = join(env.work, 'never');
      const params = { command: `touch ${marker}`, timeout_ms: 5000, max_output_bytes: 1000 };
      const policy = 'full';
      const proof = somebody.prove(bindingFor({ machineId: MACHINE, op: 'exec', params, policy }));
      for (const context of [
        { policy, approved: true, confirm: true },
        { policy, approved: true, approval_proof: proof },
      ]) {
        const r = await env.rogue.request('exec', params, context);
        expect(codeOf(r)).toBe('blocked_by_ceiling:no_pinned_approvers');
        expect(r.error?.message).toMatch(/pins no approvers/);
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      await env.dispose();
    }
  });
});

describe("the ceiling's own program allowlist: no policy can widen it", () => {
  test('a policy listing bash and python3 still runs only what the ceiling lists', async () => {
    const env = await rogueAgent((work) =>
      [
        'version = 1',
        'shell = "full"',
        'commands_mode = "allowlist"',
        'allow = ["ls *"]',
        `run_as = "${user}"`,
        `files = [{ path = "${work}", access = "rw" }]`,
        '',
      ].join('\n'),
    );
    try {
      const policy = {
        name: 'wide',
        shell: 'full',
        files: [{ path: '*', access: 'rw' }],
        commands: { mode: 'allowlist', allow: ['bash *', 'python3 *', 'ls *'] },
      };
      const marker = join(env.work, 'escaped');
      const run = (command: string | string[]) =>
        env.rogue.request(
          'exec',
          {
            ...(typeof command === 'string' ? { command } : { argv: command }),
            timeout_ms: 5000,
            max_output_bytes: 10_000,
          },
          { policy, approved: true, confirm: true },
        );
      for (const command of [
        `bash -c "touch ${marker}"`,
        `python3 -c "open('${marker}', 'w')"`,
        ['bash', '-c', `touch ${marker}`],
        ['python3', '-c', `open('${marker}', 'w')`],
      ]) {
        const r = await run(command);
        expect(r.error?.code).toBe('blocked_by_ceiling');
      }
      expect(existsSync(marker)).toBe(false);
      writeFileSync(join(env.work, 'visible.txt'), 'x');
      const ls = await run(`ls ${env.work}`);
      expect(ls.ok).toBe(true);
      expect(ls.chunks.map((c) => c.data).join('')).toContain('visible.txt');
    } finally {
      await env.dispose();
    }
  });

  test('commands_mode = "allowlist" with an empty list runs nothing, with a clear reason', async () => {
    const env = await rogueAgent((work) =>
      [
        'version = 1',
        'shell = "full"',
        'commands_mode = "allowlist"',
        `run_as = "${user}"`,
        `files = [{ path = "${work}", access = "rw" }]`,
        '',
      ].join('\n'),
    );
    try {
      const r = await env.rogue.request(
        'exec',
        { argv: ['ls', env.work], timeout_ms: 5000, max_output_bytes: 1000 },
        { policy: { name: 'ls', shell: 'full', commands: { mode: 'allowlist', allow: ['ls *'] } }, approved: true },
      );
      expect(r.error?.code).toBe('blocked_by_ceiling');
      expect(r.error?.message).toMatch(/allow list is empty/);
    } finally {
      await env.dispose();
    }
  });
});

describe("the ceiling's program allowlist through the honest gateway", () => {
  test('the gateway refuses bash -c and python3 -c too, and ls runs', async () => {
    const gw = await TestGateway.start();
    const agent = await gw.addAgent('listed', {
      ceiling: `${FULL_SHELL_CEILING}commands_mode = "allowlist"\nallow = ["ls *"]\n`,
    });
    const work = tempDir('allowlist-honest');
    const client = await mcpClient(
      gw.url,
      await gw.apiTokenWithGrant({
        policy: {
          name: 'wide-allowlist',
          shell: 'full',
          files: [{ path: '*', access: 'rw' }],
          commands: { mode: 'allowlist', allow: ['bash *', 'python3 *', 'ls *'] },
        },
        machines: '*',
        scopes: '*',
      }),
    );
    try {
      await waitFor('ceiling report', async () => {
        const r = await callTool<{ machines: { ceiling: { allow?: string[] } | null }[] }>(client, 'machines_list', {});
        return r.data.machines[0]?.ceiling?.allow?.length === 1;
      });
      const marker = join(work, 'escaped');
      for (const command of [`bash -c "touch ${marker}"`, `python3 -c "open('${marker}', 'w')"`]) {
        const r = await callTool(client, 'exec', { machine: 'listed', command });
        expect(r.error?.code).toBe('blocked_by_ceiling');
      }
      expect(existsSync(marker)).toBe(false);
      writeFileSync(join(work, 'seen.txt'), 'x');
      const ls = await callTool<{ exit_code: number; stdout: string }>(client, 'exec', {
        machine: 'listed',
        command: `ls ${work}`,
      });
      expect(ls.data.exit_code).toBe(0);
      expect(ls.data.stdout).toContain('seen.txt');
    } finally {
      await client.close();
      await agent.dispose();
      await gw.dispose();
      removeDir(work);
    }
  });
});
