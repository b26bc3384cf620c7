import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCwd } from '../guard/check-cwd';
import type { RequestPolicy } from '../guard/request-policy';
import { type RunAsAccount, resolveRunAs } from '../guard/run-as';
import { sandboxSpecFor } from '../guard/sandbox-spec';
import { commandEnv } from '../launch-plan';
import { assertSandboxUsable, probeSandbox, wrapInSandbox } from '../sandbox';
import type { LaunchPlan } from './exec';

/** A long-lived process's launch (job, shell session, terminal), ready to spawn, and what to clean up after it. */
export interface PreparedLaunch {
  plan: LaunchPlan;
  cwd: string;
  account: RunAsAccount;
  sandboxed: boolean;
  /** Removes the private temp directory of a sandboxed process; call once the process is gone. */
  release: () => void;
}

/**
 * The same launch `exec` uses, for processes that outlive one request: as the ceiling's run-as account, with a
 * clean environment, and — when the shell level is `sandboxed` — wrapped in the Landlock helper with its own temp
 * directory that lives as long as the process. Never falls back to an unsandboxed run.
 */
export async function prepareLaunch(
  rp: RequestPolicy,
  argv: string[],
  options: { cwd?: string | undefined; env?: Record<string, string> | undefined },
): Promise<PreparedLaunch> {
  const account = resolveRunAs(rp.clamped.run_as);
  const env = commandEnv(options.env, { username: account.name, homedir: account.home, shell: account.shell });
  const ids = account.switchUser ? { uid: account.uid, gid: account.gid } : {};
  // Checked against the file rules and resolved (issue #10 item 4); the account's home (or /) by default.
  const cwd = await checkCwd(rp, options.cwd, account.home);
  if (rp.clamped.shell === 'full') {
    const [file = '', ...args] = argv;
    return { plan: { file, args, env, ...ids }, cwd, account, sandboxed: false, release: () => {} };
  }
  const probe = await probeSandbox(ids);
  const tmpDir = mkdtempSync(join(tmpdir(), 'letkite-cmd-'));
  const release = () => rmSync(tmpDir, { recursive: true, force: true });
  try {
    if (account.switchUser) chownSync(tmpDir, account.uid, account.gid);
    const spec = sandboxSpecFor(rp.clamped, account.home, tmpDir);
    assertSandboxUsable(probe, spec);
    // The request's environment (jobs) travels on a pipe and reaches only the sandboxed command; without one
    // (shell sessions, terminals: node-pty has no extra fds) the helper's environment is the fixed allowlist
    // below, which it hands on. The helper starts in `/` and enters `cwd` after the hiding (issue #10 items 1, 4).
    const commandEnvironment = { ...env, TMPDIR: tmpDir };
    const launch =
      options.env === undefined
        ? wrapInSandbox(spec, argv, { cwd, helperEnv: commandEnvironment })
        : wrapInSandbox(spec, argv, { cwd, env: commandEnvironment });
    return {
      plan: { file: launch.file, args: launch.args, env: launch.env, extraFds: launch.extraFds, ...ids },
      cwd: launch.cwd,
      account,
      sandboxed: true,
      release,
    };
  } catch (err) {
    release();
    throw err;
  }
}
