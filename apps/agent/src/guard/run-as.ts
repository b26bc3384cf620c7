import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { LetKiteError } from '@letkite/protocol';

/** The OS account commands and file operations run as (DESIGN §3, layer 5). */
export interface RunAsAccount {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
  /** True when the agent must switch to this account (it runs as root and the account is not root). */
  switchUser: boolean;
}

const cache = new Map<string, { account: RunAsAccount; at: number }>();
const CACHE_MS = 60_000;

function lookup(name: string): { uid: number; gid: number; home: string; shell: string } | null {
  try {
    // getent consults NSS (LDAP, sssd …), not only /etc/passwd.
    const line = execFileSync('getent', ['passwd', name], { encoding: 'utf8', timeout: 5000 }).trim();
    const f = line.split(':');
    if (f.length < 7) return null;
    return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/', shell: f[6] || '/bin/sh' };
  } catch {
    return null;
  }
}

/**
 * Resolves the ceiling's `run_as`. An agent running as root switches to that account (and stays root only when
 * the ceiling says `run_as = "root"`); an agent running as an ordinary user can only run as itself, so any other
 * `run_as` is refused rather than silently ignored.
 */
export function resolveRunAs(name: string, now = Date.now()): RunAsAccount {
  const hit = cache.get(name);
  if (hit && now - hit.at < CACHE_MS) return hit.account;
  const self = userInfo();
  const entry = lookup(name);
  if (!entry) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `run_as account "${name}" does not exist on this machine; create it or change run_as in the ceiling`,
      { layer: 'ceiling', key: 'run_as' },
    );
  }
  if (self.uid !== 0 && entry.uid !== self.uid) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `the agent runs as "${self.username}" and cannot run commands as "${name}"; set run_as = "${self.username}" or run the agent as root`,
      { layer: 'ceiling', key: 'run_as' },
    );
  }
  const account: RunAsAccount = { name, ...entry, switchUser: self.uid === 0 && entry.uid !== 0 };
  cache.set(name, { account, at: now });
  return account;
}
