import { accessSync, chownSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { type ExecParams, type ExecResult, LetKiteError, type RequestContext } from '@letkite/protocol';
import type { CeilingState } from '../ceiling/ceiling-source';
import { authorizeCommand, authorizeGatedTool, isAllowlist } from '../guard/authorize-command';
import { checkCwd } from '../guard/check-cwd';
import { type RequestPolicy, requestPolicy } from '../guard/request-policy';
import { type RunAsAccount, resolveRunAs } from '../guard/run-as';
import { sandboxSpecFor } from '../guard/sandbox-spec';
import { commandEnv, TRUSTED_PATH } from '../launch-plan';
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
  const { words } = authorizeCommand(rp, command, context, params.env, params.stdin);
  const account = resolveRunAs(rp.clamped.run_as);
  const cwd = await checkCwd(rp, params.cwd, account.home);

  const argv = commandArgv(rp, params, words);
  const env = commandEnv(params.env, { username: account.name, homedir: account.home, shell: account.shell });
  const ids = account.switchUser ? { uid: account.uid, gid: account.gid } : {};
  // Commands start in the checked real directory: the account's home (or /) unless the call names one.
  const withCwd = { ...params, cwd };

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
    // The environment goes to the command on a pipe, never to the helper; the helper enters cwd itself.
    const launch = wrapInSandbox(spec, argv, { env: { ...env, TMPDIR: tmpDir }, cwd: params.cwd });
    const plan: LaunchPlan = { ...launch, ...ids };
    const result = await runExec(params, plan, signal);
    const refusal = sandboxRefusal(result.exit_code, result.stderr);
    if (refusal) throw refusal;
    return result;
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/**
 * What to start for an authorized `command` or `argv` (exec and job_start alike): in allowlist mode the one plain
 * command the rules judged, its program resolved on the trusted system path; otherwise `/bin/sh -c command`, or
 * the argv as given. `words` is what authorizeCommand parsed the command into.
 */
export function commandArgv(
  rp: RequestPolicy,
  params: { command?: string | undefined; argv?: readonly string[] | undefined },
  words: readonly string[] | null | undefined,
): string[] {
  if (isAllowlist(rp.clamped)) {
    if (!words || words.length === 0) {
      throw new LetKiteError('blocked_by_policy', 'allowlist mode runs exactly one plain command', {
        layer: 'allowlist',
      });
    }
    return [resolveTrustedProgram(words[0] as string), ...words.slice(1)];
  }
  return params.command !== undefined ? ['/bin/sh', '-c', params.command] : [...(params.argv ?? [])];
}

/**
 * Allowlist mode judges a bare program name on the trusted system path (DESIGN §4), so it also runs it from
 * there: the first executable regular file named so in TRUSTED_PATH, as an absolute path, whatever PATH the
 * command's environment holds. A name with a slash is the path the allowlist entry itself matched.
 */
export function resolveTrustedProgram(name: string): string {
  if (name.includes('/')) return name;
  for (const dir of TRUSTED_PATH.split(':')) {
    const candidate = posix.join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: try the next directory
    }
  }
  throw new LetKiteError('not_found', `"${name}" is not installed in this machine's system directories`, {
    layer: 'allowlist',
  });
}
