import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecParams, type ExecResult, LetKiteError, type RequestContext } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import { authorizeCommand, authorizeGatedTool, isAllowlist } from '../guard/authorize-command';
import { requestPolicy } from '../guard/request-policy';
import { type RunAsAccount, resolveRunAs } from '../guard/run-as';
import { sandboxSpecFor } from '../guard/sandbox-spec';
import { commandEnv } from '../launch-plan';
import { assertSandboxUsable, probeSandbox, sandboxRefusal, wrapInSandbox } from '../sandbox';
import { type ExecOutput, type LaunchPlan, runExec } from './exec';

/**
 * `exec` on the agent: re-checks the request against this machine's ceiling and the request's policy, then runs
 * it as the run-as account — inside the Landlock sandbox when the shell level is `sandboxed`, with execve and no
 * shell in allowlist mode. Never falls back to an unsandboxed run.
 */
export async function execCommand(
  params: ExecParams,
  context: RequestContext,
  ceiling: CeilingState,
  signal: AbortSignal,
): Promise<ExecResult & ExecOutput> {
  if ((params.command === undefined) === (params.argv === undefined)) {
    throw new LetKiteError('invalid_params', 'give exactly one of "command" or "argv"');
  }
  const rp = requestPolicy(context.policy, ceiling);
  const command = params.command ?? params.argv ?? [];
  // exec_many runs this op on each machine; the gateway gates it when the policy lists exec (or exec_many).
  authorizeGatedTool(rp, 'exec', context);
  const { words } = authorizeCommand(rp, command, context);
  const account = resolveRunAs(rp.clamped.run_as);

  let argv: string[];
  if (isAllowlist(rp.clamped)) {
    if (!words || words.length === 0) {
      throw new LetKiteError('blocked_by_policy', 'allowlist mode runs exactly one plain command', {
        layer: 'allowlist',
      });
    }
    argv = words;
  } else {
    argv = params.command !== undefined ? ['/bin/sh', '-c', params.command] : [...(params.argv ?? [])];
  }
  const env = commandEnv(params.env, { username: account.name, homedir: account.home, shell: account.shell });
  const ids = account.switchUser ? { uid: account.uid, gid: account.gid } : {};
  // Commands start in the account's home, or / for accounts whose home does not exist (nobody, daemons).
  const withCwd = { ...params, cwd: params.cwd ?? (existsSync(account.home) ? account.home : '/') };

  if (rp.clamped.shell === 'full') {
    const [file = '', ...args] = argv;
    return runExec(withCwd, { file, args, env, ...ids }, signal);
  }
  return runSandboxed(withCwd, argv, env, account, rp, signal);
}

async function runSandboxed(
  params: ExecParams,
  argv: string[],
  env: Record<string, string>,
  account: RunAsAccount,
  rp: ReturnType<typeof requestPolicy>,
  signal: AbortSignal,
): Promise<ExecResult & ExecOutput> {
  const ids = account.switchUser ? { uid: account.uid, gid: account.gid } : {};
  const probe = await probeSandbox(ids);
  const tmpDir = mkdtempSync(join(tmpdir(), 'letkite-cmd-'));
  try {
    if (account.switchUser) chownSync(tmpDir, account.uid, account.gid);
    const spec = sandboxSpecFor(rp.clamped, account.home, tmpDir);
    assertSandboxUsable(probe, spec);
    const launch = wrapInSandbox(spec, argv);
    const plan: LaunchPlan = { file: launch.file, args: launch.args, env: { ...env, TMPDIR: tmpDir }, ...ids };
    const result = await runExec(params, plan, signal);
    const refusal = sandboxRefusal(result.exit_code, result.stderr);
    if (refusal) throw refusal;
    return result;
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
}
