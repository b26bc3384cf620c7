import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LetKiteError } from '@letkite/protocol';
import { z } from 'zod';
import { sandboxSupportFor } from './platform';
import { parseSandboxSpec, type SandboxSpec } from './spec';

/** The helper's exit code when it refused to run the command (it never ran it). See README "Failing closed". */
export const SANDBOX_REFUSED_EXIT = 125;
/** Every line the helper itself writes to stderr starts with this. */
export const SANDBOX_ERROR_PREFIX = 'letkite-sandbox: ';
/** The `<kind>` in `letkite-sandbox: <kind>: <detail>` of a refusal. */
export const sandboxRefusalKinds = ['usage', 'landlock unavailable', 'userns unavailable', 'setup failed'] as const;
export type SandboxRefusalKind = (typeof sandboxRefusalKinds)[number];

/** Where `npm install` / `npm run build -w @letkite/agent` puts the helper. */
export function sandboxHelperPath(): string {
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
});

const probes = new Map<string, Promise<SandboxProbe>>();

function unavailable(reason: string): SandboxProbe {
  return { available: false, abi: 0, userns: false, mountns: false, net: false, scoped: false, reason };
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
      const base = { abi: out.abi, userns: out.userns, mountns: out.mountns, net: out.net, scoped: out.scoped };
      if (!out.landlock) resolve({ ...base, available: false, reason: 'Landlock is not enabled in this kernel' });
      else if (out.abi < out.min_abi)
        resolve({ ...base, available: false, reason: `Landlock ABI ${out.abi} is below the required ${out.min_abi}` });
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
  const details = { abi: probe.abi, userns: probe.userns, mountns: probe.mountns };
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

/** What to spawn: `spawn(launch.file, launch.args, { env, cwd, uid, gid, stdio })`. No extra fds are needed. */
export interface SandboxLaunch {
  file: string;
  args: string[];
}

/**
 * Wraps `argv` in the helper. Throws `invalid_params` for a malformed spec or argv, and `unsupported` when this is
 * not Linux or the helper is missing. The helper refuses (exit 125, see `sandboxRefusal`) anything it cannot
 * apply at run time; it never runs the command unsandboxed.
 */
export function wrapInSandbox(spec: SandboxSpec, argv: string[], options: { helperPath?: string } = {}): SandboxLaunch {
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
  args.push('--', ...argv);
  return { file: helper, args };
}

/**
 * Reads a finished sandboxed command: a refusal by the helper becomes `unsupported` (kind in `details.kind`),
 * anything else (the command's own exit status) gives `undefined`. A command can print a look-alike line and
 * exit 125, but that only makes its own failure look like a refusal; a refusal never looks like a success.
 */
export function sandboxRefusal(exitCode: number | null, stderr: string): LetKiteError | undefined {
  if (exitCode !== SANDBOX_REFUSED_EXIT) return undefined;
  for (const line of stderr.split('\n')) {
    if (!line.startsWith(SANDBOX_ERROR_PREFIX)) continue;
    const rest = line.slice(SANDBOX_ERROR_PREFIX.length);
    const kind = sandboxRefusalKinds.find((k) => rest.startsWith(`${k}: `));
    if (kind) return new LetKiteError('unsupported', `sandbox refused the command: ${rest}`, { kind });
  }
  return undefined;
}
