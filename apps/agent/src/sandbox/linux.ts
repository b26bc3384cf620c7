import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ErrorCode, LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { TRUSTED_PATH } from '../launch-plan';
import { sandboxSupportFor } from './platform';
import { parseSandboxSpec, type SandboxSpec } from './spec';

/** The helper's exit code when it refused to run the command (it never ran it). See README "Failing closed". */
export const SANDBOX_REFUSED_EXIT = 125;
/** Every line the helper itself writes to stderr starts with this. */
export const SANDBOX_ERROR_PREFIX = 'letkite-sandbox: ';
/** The `<kind>` in `letkite-sandbox: <kind>: <detail>` of a refusal. */
export const sandboxRefusalKinds = [
  'usage',
  'landlock unavailable',
  'userns unavailable',
  'seccomp unavailable',
  'setup failed',
  'environment refused',
  'cwd unavailable',
] as const;
export type SandboxRefusalKind = (typeof sandboxRefusalKinds)[number];

/** The error code each refusal becomes: the machine cannot do it, the environment is not allowed, or no such cwd. */
const refusalCodes: Record<SandboxRefusalKind, ErrorCode> = {
  usage: 'unsupported',
  'landlock unavailable': 'unsupported',
  'userns unavailable': 'unsupported',
  'seccomp unavailable': 'unsupported',
  'setup failed': 'unsupported',
  'environment refused': 'blocked_by_policy',
  'cwd unavailable': 'not_found',
};

/**
 * The helper's own environment: a fixed allowlist, nothing from the request (issue #10 item 1). PATH is the trusted
 * one: the helper resolves the program with it. The command's environment travels on a pipe (`--env-fd`).
 */
export function sandboxHelperEnv(): Record<string, string> {
  return { PATH: TRUSTED_PATH };
}

/** Where `npm install` / `npm run build -w @letkite/agent` puts the helper. */
export function sandboxHelperPath(): string {
  // Built (tools/build), the helper sits next to the bundle.
  if (import.meta.letkiteBundle) return fileURLToPath(new URL('./letkite-sandbox', import.meta.url));
  return fileURLToPath(new URL('../../native/build/letkite-sandbox', import.meta.url));
}

/** What the kernel and the helper can do, as seen by one OS account. */
export interface SandboxProbe {
  /** Landlock works at ABI >= 3 and the helper ran: sandboxed commands can be started. */
  available: boolean;
  /** Landlock ABI of the kernel (0 when unavailable). */
  abi: number;
  /** Unprivileged user namespaces work for this account. */
  userns: boolean;
  /** Denied paths can be hidden (a private mount namespace can be set up: as root directly, else via userns). */
  mountns: boolean;
  /** TCP bind/connect can be restricted (ABI >= 4). */
  net: boolean;
  /** Signals and abstract Unix sockets are scoped to the sandbox (ABI >= 6). */
  scoped: boolean;
  /** A PID namespace with its own /proc can be made (as root directly, else via userns). */
  pidns: boolean;
  /** An empty network namespace can be made (a second layer when no TCP is granted; seccomp is the first). */
  netns: boolean;
  /** A seccomp filter can be installed (the socket-family rules: no Unix, UDP, raw sockets). */
  seccomp: boolean;
  /** The helper is linked statically (no loader variable can act on it). */
  static: boolean;
  /** The account the probe ran as (0: root, which must get every namespace). */
  euid: number;
  /** Why `available` is false. */
  reason?: string;
}

/** Which helper to run and as whom; probe as the run-as account, since user namespaces may differ per account. */
export interface ProbeOptions {
  helperPath?: string;
  uid?: number;
  gid?: number;
}

const ProbeOutput = z.object({
  abi: z.number().int(),
  landlock: z.boolean(),
  min_abi: z.number().int(),
  net: z.boolean(),
  scoped: z.boolean(),
  userns: z.boolean(),
  mountns: z.boolean(),
  pidns: z.boolean(),
  netns: z.boolean(),
  seccomp: z.boolean(),
  static: z.boolean(),
  euid: z.number().int(),
});

const probes = new Map<string, Promise<SandboxProbe>>();

function unavailable(reason: string): SandboxProbe {
  return {
    available: false,
    abi: 0,
    userns: false,
    mountns: false,
    net: false,
    scoped: false,
    pidns: false,
    netns: false,
    seccomp: false,
    static: false,
    euid: -1,
    reason,
  };
}

function runProbe(helper: string, options: ProbeOptions): Promise<SandboxProbe> {
  const support = sandboxSupportFor(process.platform);
  if (!support.supported) return Promise.resolve(unavailable(support.reason));
  if (support.mechanism !== 'landlock') return Promise.resolve(unavailable('the Landlock helper is Linux only'));
  return new Promise((resolve) => {
    const ids = {
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    };
    execFile(helper, ['--probe'], { timeout: 5_000, env: {}, ...ids }, (err, stdout) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        resolve(
          unavailable(
            code === 'ENOENT' || code === 'EACCES'
              ? `sandbox helper missing at ${helper}`
              : `sandbox probe failed: ${err.message}`,
          ),
        );
        return;
      }
      let out: z.infer<typeof ProbeOutput>;
      try {
        out = ProbeOutput.parse(JSON.parse(stdout));
      } catch {
        resolve(unavailable(`sandbox probe printed an unexpected answer: ${JSON.stringify(stdout.slice(0, 200))}`));
        return;
      }
      const base = {
        abi: out.abi,
        userns: out.userns,
        mountns: out.mountns,
        net: out.net,
        scoped: out.scoped,
        pidns: out.pidns,
        netns: out.netns,
        seccomp: out.seccomp,
        static: out.static,
        euid: out.euid,
      };
      if (!out.landlock) resolve({ ...base, available: false, reason: 'Landlock is not enabled in this kernel' });
      else if (out.abi < out.min_abi)
        resolve({ ...base, available: false, reason: `Landlock ABI ${out.abi} is below the required ${out.min_abi}` });
      else if (!out.seccomp)
        resolve({
          ...base,
          available: false,
          reason: 'seccomp filters are unavailable (Unix, UDP and raw sockets could not be blocked)',
        });
      else if (out.euid === 0 && !(out.mountns && out.pidns))
        resolve({
          ...base,
          available: false,
          reason: 'root needs mount and PID namespaces for the sandbox, and the kernel refuses them',
        });
      else resolve({ ...base, available: true });
    });
  });
}

/** Runs `letkite-sandbox --probe` once per helper and account, and caches the answer for the process lifetime. */
export function probeSandbox(options: ProbeOptions = {}): Promise<SandboxProbe> {
  const helper = options.helperPath ?? sandboxHelperPath();
  const key = `${helper}\0${options.uid ?? ''}\0${options.gid ?? ''}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = runProbe(helper, options);
    probes.set(key, probe);
  }
  return probe;
}

/**
 * Refuses early, with `unsupported` and the reason, a spec this machine cannot enforce: no usable Landlock, a TCP
 * restriction without ABI 4, or deny paths without a way to hide them. Conservative: the helper itself would
 * only need a mount namespace for deny paths inside granted trees.
 */
export function assertSandboxUsable(probe: SandboxProbe, spec: SandboxSpec): void {
  const details = {
    abi: probe.abi,
    userns: probe.userns,
    mountns: probe.mountns,
    pidns: probe.pidns,
    netns: probe.netns,
    seccomp: probe.seccomp,
  };
  if (!probe.available)
    throw new LetKiteError('unsupported', `sandboxed shell unavailable: ${probe.reason ?? 'unknown reason'}`, details);
  if (spec.allowTcp !== true && !probe.net)
    throw new LetKiteError(
      'unsupported',
      `sandboxed shell unavailable: Landlock ABI ${probe.abi} cannot restrict TCP (needs 4)`,
      details,
    );
  if (spec.denyPaths.length > 0 && !probe.mountns)
    throw new LetKiteError(
      'unsupported',
      'sandboxed shell unavailable: denied paths cannot be hidden without user namespaces',
      details,
    );
}

/**
 * What to spawn: `spawn(launch.file, launch.args, { env: launch.env, cwd: launch.cwd, uid, gid, stdio })` with one
 * extra pipe per `extraFds` entry (fd 3 onwards), each written and closed right after the spawn.
 */
export interface SandboxLaunch {
  file: string;
  args: string[];
  /** The helper's environment: the fixed allowlist, or `helperEnv` when no `env` travels on the pipe. */
  env: Record<string, string>;
  /** The command's environment block for `--env-fd 3` (NUL-separated NAME=VALUE), when `env` was given. */
  extraFds: string[];
  /** Where to spawn the helper: always `/`; the command's cwd is entered by the helper after the restrictions. */
  cwd: string;
}

export interface WrapOptions {
  helperPath?: string;
  /** The command's environment, handed over on a pipe and applied only inside the sandbox. */
  env?: Record<string, string>;
  /** The helper's own environment when `env` is not given (a fixed allowlist the caller built; no request data). */
  helperEnv?: Record<string, string>;
  /** The command's working directory, entered after the hiding mounts and every restriction. */
  cwd?: string;
}

/** `NAME=VALUE\0…` for the helper's `--env-fd`; a name must be non-empty without `=`, nothing may hold NUL. */
export function encodeEnvironment(env: Record<string, string>): string {
  let block = '';
  for (const [name, value] of Object.entries(env)) {
    if (name === '' || name.includes('=') || name.includes('\0') || value.includes('\0'))
      throw new LetKiteError(
        'invalid_params',
        `environment variable ${JSON.stringify(name.slice(0, 64))} is malformed`,
      );
    block += `${name}=${value}\0`;
  }
  return block;
}

/**
 * Wraps `argv` in the helper. Throws `invalid_params` for a malformed spec, argv or environment, and `unsupported`
 * when this is not Linux or the helper is missing. The helper refuses (exit 125, see `sandboxRefusal`) anything
 * it cannot apply at run time; it never runs the command unsandboxed.
 */
export function wrapInSandbox(spec: SandboxSpec, argv: string[], options: WrapOptions = {}): SandboxLaunch {
  const support = sandboxSupportFor(process.platform);
  if (!support.supported) throw new LetKiteError('unsupported', support.reason);
  if (support.mechanism !== 'landlock')
    throw new LetKiteError(
      'unsupported',
      `wrapInSandbox is the Linux sandbox; use ${support.mechanism} on ${process.platform}`,
    );
  const checked = parseSandboxSpec(spec);
  if (argv.length === 0 || argv.some((a) => a.includes('\0')) || argv[0] === '')
    throw new LetKiteError('invalid_params', 'sandboxed command needs a program and arguments without NUL');
  if (options.cwd !== undefined && (!options.cwd.startsWith('/') || options.cwd.includes('\0')))
    throw new LetKiteError('invalid_params', 'the working directory must be an absolute path');
  const helper = options.helperPath ?? sandboxHelperPath();
  try {
    accessSync(helper, constants.X_OK);
  } catch {
    throw new LetKiteError('unsupported', `sandboxed shell unavailable: sandbox helper missing at ${helper}`, {
      helper,
    });
  }
  const args: string[] = [];
  for (const p of checked.readPaths) args.push('--ro', p);
  for (const p of checked.writePaths) args.push('--rw', p);
  for (const p of checked.denyPaths) args.push('--deny', p);
  args.push('--tmp', checked.tmpDir);
  const tcp = checked.allowTcp;
  args.push('--tcp', tcp === true ? 'all' : tcp === false || tcp.length === 0 ? 'none' : tcp.join(','));
  if (options.cwd !== undefined) args.push('--cwd', options.cwd);
  const extraFds: string[] = [];
  if (options.env !== undefined) {
    extraFds.push(encodeEnvironment(options.env));
    args.push('--env-fd', '3');
  }
  args.push('--', ...argv);
  const env = options.env === undefined && options.helperEnv !== undefined ? options.helperEnv : sandboxHelperEnv();
  return { file: helper, args, env, extraFds, cwd: '/' };
}

/**
 * Reads a finished sandboxed command: a refusal by the helper becomes a LetKiteError (kind in `details.kind`;
 * `blocked_by_policy` for a refused environment variable, `not_found` for a cwd missing inside the sandbox,
 * `unsupported` otherwise),
 * anything else (the command's own exit status) gives `undefined`. A command can print a look-alike line and
 * exit 125, but that only makes its own failure look like a refusal; a refusal never looks like a success.
 */
export function sandboxRefusal(exitCode: number | null, stderr: string): LetKiteError | undefined {
  if (exitCode !== SANDBOX_REFUSED_EXIT) return undefined;
  for (const line of stderr.split('\n')) {
    if (!line.startsWith(SANDBOX_ERROR_PREFIX)) continue;
    const rest = line.slice(SANDBOX_ERROR_PREFIX.length);
    const kind = sandboxRefusalKinds.find((k) => rest.startsWith(`${k}: `));
    if (kind) return new LetKiteError(refusalCodes[kind], `sandbox refused the command: ${rest}`, { kind });
  }
  return undefined;
}
