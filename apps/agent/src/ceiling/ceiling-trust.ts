import { execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** An account's uid and every group it is in. */
export interface AccountIds {
  uid: number;
  gids: readonly number[];
}

/** getent for the uid, `id -G` for the groups (both consult NSS, not only /etc/passwd and /etc/group). */
export function lookupAccountIds(name: string): AccountIds | null {
  try {
    const line = execFileSync('getent', ['passwd', name], { encoding: 'utf8', timeout: 5000 }).trim();
    const uid = Number(line.split(':')[2]);
    if (!Number.isInteger(uid)) return null;
    const groups = execFileSync('id', ['-G', name], { encoding: 'utf8', timeout: 5000 })
      .trim()
      .split(/\s+/)
      .map(Number)
      .filter(Number.isInteger);
    return { uid, gids: groups };
  } catch {
    return null;
  }
}

const STICKY = 0o1000;

/**
 * Why `account` could change the file at `path` (or replace it), or null when it cannot: the file or any
 * directory on its real path is owned by the account (an owner can always chmod), or writable by it through the
 * group or other bits. A sticky directory (such as /tmp) only lets an account replace entries it owns, and the
 * entry below it is checked on its own. Root is not checked: it can change anything.
 */
export function ceilingWritableBy(path: string, account: AccountIds): string | null {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null;
  }
  let current = real;
  for (;;) {
    let s: ReturnType<typeof statSync>;
    try {
      s = statSync(current);
    } catch {
      return `cannot check ${current}`;
    }
    const what = current === real ? 'the ceiling file' : `the directory ${current}`;
    if (s.uid === account.uid) return `${what} is owned by uid ${account.uid}`;
    const inGroup = account.gids.includes(s.gid);
    const writable = (s.mode & 0o002) !== 0 || (inGroup && (s.mode & 0o020) !== 0);
    const stickyDir = s.isDirectory() && (s.mode & STICKY) !== 0;
    if (writable && !stickyDir) return `${what} is writable by uid ${account.uid}`;
    const parent = dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/**
 * Why the ceiling at `path` cannot be trusted because its run-as account could change it, or null. Only asked
 * when run_as is another account than `selfUid` and not root: root changes anything anyway, and an agent's own
 * account owns its ceiling by construction (the `npm start` case, where the protected paths are the defence).
 */
export function runAsCouldChangeCeiling(
  path: string,
  runAs: string,
  selfUid: number,
  lookup: (name: string) => AccountIds | null = lookupAccountIds,
): string | null {
  const account = lookup(runAs);
  // An unknown account is refused per request by resolveRunAs, with its own reason.
  if (!account || account.uid === selfUid || account.uid === 0) return null;
  const problem = ceilingWritableBy(path, account);
  return problem ? `${problem}: the run_as account "${runAs}" could change its own ceiling` : null;
}
