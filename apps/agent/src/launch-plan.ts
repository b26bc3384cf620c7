import { userInfo } from 'node:os';
import type { ExecParams } from '@letkite/protocol';
import type { LaunchPlan } from './executors/exec';

/** The PATH commands see: system directories only, so a bare program name means the system's program. */
export const TRUSTED_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * A clean environment for commands: the agent's own variables (which may hold secrets) are not inherited; the
 * caller's `env` is added on top.
 */
export function commandEnv(extra: Record<string, string> | undefined, account = userInfo()): Record<string, string> {
  return {
    PATH: TRUSTED_PATH,
    HOME: account.homedir,
    USER: account.username,
    LOGNAME: account.username,
    SHELL: account.shell ?? '/bin/sh',
    LANG: process.env.LANG ?? 'C.UTF-8',
    TERM: 'dumb',
    ...extra,
  };
}

export function buildLaunchPlan(params: ExecParams): LaunchPlan {
  const env = commandEnv(params.env);
  if (params.command !== undefined) return { file: '/bin/sh', args: ['-c', params.command], env };
  const [file, ...args] = params.argv ?? [];
  return { file: file ?? '', args, env };
}
