import { LetKiteError } from '@letkite/protocol';
import { parseSandboxSpec, type SandboxSpec } from './spec';

/** Always this path, never `sandbox-exec` from PATH. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** Read + map-executable: where macOS keeps programs, libraries and the dyld cache. */
const systemReadPaths = [
  '/usr',
  '/bin',
  '/sbin',
  '/System',
  '/Library',
  '/opt',
  '/private/etc',
  '/private/var/db/timezone',
  '/dev',
];

/** Devices every program expects, read/write. */
const deviceLiterals = ['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/tty', '/dev/dtracehelper'];

/** Mach services libc needs for user lookup, logging and notifications; the rest of XPC stays denied. */
const machServices = [
  'com.apple.system.opendirectoryd.libinfo',
  'com.apple.system.logger',
  'com.apple.system.notification_center',
];

/** An SBPL string literal. Control characters cannot be spelled safely, so they are refused. */
function sbplString(value: string): string {
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new LetKiteError('invalid_params', `sandbox path has a control character: ${JSON.stringify(value)}`);
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

function subpaths(paths: readonly string[]): string {
  return paths.map((p) => `(subpath ${sbplString(p)})`).join(' ');
}

/**
 * The Seatbelt (SBPL) profile for a spec: deny by default; read on system paths and `readPaths`; read/write on
 * `writePaths` and `tmpDir`; TCP per `allowTcp`; `denyPaths` denied for reading and writing. Deny rules come
 * last because in SBPL the later matching rule wins. Paths must be real paths (`/private/tmp`, not `/tmp`):
 * Seatbelt matches after symlinks are resolved. Pure.
 */
export function seatbeltProfile(spec: SandboxSpec): string {
  const s = parseSandboxSpec(spec);
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow file-read-metadata)',
    `(allow mach-lookup ${machServices.map((m) => `(global-name ${sbplString(m)})`).join(' ')})`,
    '(allow file-read* (literal "/"))',
    `(allow file-read* file-map-executable ${subpaths(systemReadPaths)})`,
    `(allow file-read* file-write* file-ioctl ${deviceLiterals.map((d) => `(literal ${sbplString(d)})`).join(' ')} (regex #"^/dev/ttys[0-9]+$"))`,
  ];
  if (s.readPaths.length > 0) lines.push(`(allow file-read* file-map-executable ${subpaths(s.readPaths)})`);
  lines.push(`(allow file-read* file-write* file-map-executable ${subpaths([...s.writePaths, s.tmpDir])})`);
  if (s.allowTcp === true) {
    lines.push('(allow network*)');
  } else if (s.allowTcp !== false && s.allowTcp.length > 0) {
    lines.push('(allow system-socket)');
    lines.push(`(allow network-outbound ${s.allowTcp.map((port) => `(remote tcp "*:${port}")`).join(' ')})`);
  }
  if (s.denyPaths.length > 0) lines.push(`(deny file-read* file-write* ${subpaths(s.denyPaths)})`);
  return `${lines.join('\n')}\n`;
}

/** What to spawn on macOS: `/usr/bin/sandbox-exec -p PROFILE -- argv…`. */
export function wrapInSeatbelt(spec: SandboxSpec, argv: string[]): { file: string; args: string[] } {
  if (argv.length === 0 || argv[0] === '')
    throw new LetKiteError('invalid_params', 'sandboxed command needs a program and arguments');
  return { file: SANDBOX_EXEC, args: ['-p', seatbeltProfile(spec), '--', ...argv] };
}
