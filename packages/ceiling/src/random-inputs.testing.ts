import type { FileRule, Policy } from '@letkite/policy';
import { FULL_POLICY, guiLevels, shellLevels } from '@letkite/policy';
import type { Ceiling } from './ceiling-schema';
import { DEFAULT_CEILING } from './defaults';

/** A small seeded generator (mulberry32) so property tests are repeatable without a new dependency. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  bool(): boolean {
    return this.next() < 0.5;
  }
  some<T>(items: readonly T[], max: number): T[] {
    return [...new Set(Array.from({ length: this.int(max + 1) }, () => this.pick(items)))];
  }
}

export const HOME = '/home/kite';
const segments = ['srv', 'app', 'etc', 'home', 'kite', 'tmp', 'x.pem', '.env', 'log', 'a'];
const patterns = [
  '*',
  '~',
  '~/a',
  '~/.env',
  '/srv',
  '/srv/app',
  '/srv/*',
  '/etc',
  '/tmp',
  '/home/*/a',
  '**/x.pem',
  '/srv/**/log',
  '/a?',
];
const targets = [
  '127.0.0.1:5432',
  '10.0.0.0/8:*',
  '10.1.0.0/16:400-500',
  'db:5432',
  'db:*',
  '[fd00::/8]:22',
  '0.0.0.0/0:443',
];
const apps = ['firefox', 'terminal', 'code'];
const rules = [
  { match: 'systemctl *', verdict: 'approve' as const },
  { match: 'rm *', verdict: 'deny' as const },
];

export function randomPath(r: Random): string {
  return `/${Array.from({ length: r.int(5) }, () => r.pick(segments)).join('/')}`;
}

function randomFiles(r: Random): FileRule[] {
  const paths = r.some(patterns, 4);
  return paths.map((path) => ({ path, access: r.pick(['ro', 'rw'] as const) }));
}

export function randomPolicy(r: Random): Policy {
  return {
    ...FULL_POLICY,
    name: 'random',
    shell: r.pick(shellLevels),
    gui: r.pick(guiLevels),
    gui_apps: r.some(apps, 2),
    files: randomFiles(r),
    deny: r.some(patterns.slice(2), 2),
    tunnel_targets: r.some(targets, 3),
    commands: { ...FULL_POLICY.commands, mode: r.pick(['shell', 'allowlist'] as const), rules: r.some(rules, 2) },
  };
}

/** Real COSE public keys (P-256 and Ed25519) for pinned approvers. */
export const SAMPLE_COSE_KEYS = {
  es256: 'pQECAyYgASFYIMnaKxRDYfnDwbuRtqW5U44ZxBYKAxaoowK8pwJpqzsmIlggdTzJjL0NMskwmDxzF9aylP3qawQeF4QAL95RlTQoi7Y',
  ed25519: 'pAEBAycgBiFYIBQmF34s4SM8A0tl-tukDSCMk2xUCnb07d-USUCjJhES',
} as const;

const approvers = [
  { name: 'Petra', credential_id: 'cGV0cmE', public_key: SAMPLE_COSE_KEYS.es256, rp_id: 'letkite.example.com' },
  { name: 'Rui "ops"', credential_id: 'cnVp', public_key: SAMPLE_COSE_KEYS.ed25519, rp_id: 'localhost' },
];

export function randomCeiling(r: Random): Ceiling {
  return {
    ...DEFAULT_CEILING,
    shell: r.pick(shellLevels),
    commands_mode: r.pick(['any', 'allowlist'] as const),
    files: randomFiles(r),
    deny: r.some(patterns.slice(2), 2),
    gui: r.pick(guiLevels),
    gui_apps: r.some(apps, 2),
    tunnel_targets: r.some(targets, 3),
    terminals: r.bool(),
    transfers: r.bool(),
    wake: r.bool(),
    run_as: r.pick(['letkite', 'root', 'svc-app']),
    rules: r.some(rules, 2),
    allow: r.some(['ls *', 'df -h', '/usr/bin/systemctl status *'], 2),
    approvers: r.some(approvers, 2),
  };
}

export const randomHosts = ['127.0.0.1', '10.1.2.3', '10.2.0.1', '192.168.1.1', 'db', 'other', 'fd00::1', '::1'];
export const randomPorts = [22, 443, 450, 5432, 8080];
