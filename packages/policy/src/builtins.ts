import { Policy } from './policy-schema';

/**
 * The usual secret files, hidden by the `read-only` built-in and by the default ceiling. Keys, certificates'
 * private halves, cloud and cluster credentials, package-registry tokens, password hashes. `~` is the home of
 * the run-as account; the `**​/` entries catch copies anywhere (other users' homes, project checkouts).
 */
export const DEFAULT_SECRET_PATHS = [
  '~/.ssh',
  '/home/*/.ssh',
  '/root/.ssh',
  '**/id_rsa*',
  '**/id_ecdsa*',
  '**/id_ed25519*',
  '**/id_dsa*',
  '**/*.pem',
  '**/*.key',
  '**/*.p12',
  '**/*.pfx',
  '**/.env',
  '**/.env.*',
  '~/.gnupg',
  '~/.password-store',
  '~/.aws/credentials',
  '~/.config/gcloud',
  '~/.azure',
  '~/.kube/config',
  '~/.docker/config.json',
  '~/.netrc',
  '~/.pgpass',
  '~/.git-credentials',
  '~/.npmrc',
  '~/.pypirc',
  '~/.config/gh/hosts.yml',
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers*',
  '/etc/ssh/ssh_host_*_key',
] as const;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Built-in `full`: shell and files unrestricted, screen off. Commands default to `allow`; the built-in command
 * layers (no wiping the system, confirm for risky commands) still apply because they are always on. No tunnels:
 * "full" is about this machine, not about reaching others through it.
 */
export const FULL_POLICY: Policy = deepFreeze(
  Policy.parse({
    name: 'full',
    shell: 'full',
    files: [{ path: '*', access: 'rw' }],
    commands: { mode: 'shell', default: 'allow' },
  }),
);

/** Built-in `read-only`: no commands, every file readable except `DEFAULT_SECRET_PATHS`, screen off. */
export const READ_ONLY_POLICY: Policy = deepFreeze(
  Policy.parse({
    name: 'read-only',
    shell: 'off',
    files: [{ path: '*', access: 'ro' }],
    deny: [...DEFAULT_SECRET_PATHS],
    commands: { mode: 'shell', default: 'deny' },
  }),
);

export const builtinPolicyNames = ['full', 'read-only'] as const;
export type BuiltinPolicyName = (typeof builtinPolicyNames)[number];

/** The built-ins every account has, by name. */
export const builtinPolicies: Readonly<Record<BuiltinPolicyName, Policy>> = Object.freeze({
  full: FULL_POLICY,
  'read-only': READ_ONLY_POLICY,
});
