/** Where a bare-name allow rule may find its program (DESIGN §4): root-owned system directories. */
export const defaultTrustedDirs = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Lexically normalises an absolute path: `//`, `.` and `..` resolved, no trailing slash (except `/`). */
export function normalizeAbsolutePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** The last path component, for either slash; lower-cased and without `.exe` for evidence matching. */
export function programBasename(name: string): string {
  const slash = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
  return name.slice(slash + 1);
}

const evidenceNames = new Map<string, string>();

/** The basename, lower-cased, without `.exe` (remembered: every command asks several times; bounded). */
export function evidenceName(name: string): string {
  let evidence = evidenceNames.get(name);
  if (evidence === undefined) {
    evidence = programBasename(name)
      .toLowerCase()
      .replace(/\.exe$/, '');
    if (evidenceNames.size > 4096) evidenceNames.clear();
    evidenceNames.set(name, evidence);
  }
  return evidence;
}

export function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

/** Device files that are safe to write to: they are not disks. */
const harmlessDevices = new Set([
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/tty',
  '/dev/stdin',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/console',
  '/dev/ptmx',
]);

/** Whether writing to this path could hit a disk or memory device (anything under /dev but the harmless ones). */
export function isDiskDevice(path: string): boolean {
  if (!path.startsWith('/')) return false;
  const normalized = normalizeAbsolutePath(path);
  if (!normalized.startsWith('/dev/')) return false;
  if (harmlessDevices.has(normalized)) return false;
  return !/^\/dev\/(fd\/\d+|pts\/\d+|tty[A-Za-z0-9]*|shm\/.*|mqueue\/.*)$/.test(normalized);
}

export function isHarmlessDevice(path: string): boolean {
  return path.startsWith('/dev/') && !isDiskDevice(path);
}
