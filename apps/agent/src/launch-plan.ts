import { userInfo } from 'node:os';

/** The PATH commands see: system directories only, so a bare program name means the system's program. */
export const TRUSTED_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * A clean environment for commands: the agent's own variables (which may hold secrets) are not inherited; the
 * caller's `env` is added on top.
 */
export function commandEnv(
  extra: Record<string, string> | undefined,
  account: { username: string; homedir: string; shell: string | null } = userInfo(),
): Record<string, string> {
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
