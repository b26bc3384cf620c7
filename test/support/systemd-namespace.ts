import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir, waitFor } from './processes';

/**
 * A real systemd as PID 1 of its own PID, mount, UTS, IPC and cgroup namespaces, for tests of what the one-line
 * install does under systemd (daemon-reload, enable, restart, Restart=) on a machine whose own PID 1 is not
 * systemd (the CI VMs). Nothing of the host changes:
 * - /etc, /var, /opt and /home are overlays whose upper layers live in a temp dir (what the installer writes,
 *   useradd's /etc/passwd and /home/letkite, the journal); /run and /tmp are private tmpfs (tmpfiles' `D /tmp`
 *   would otherwise empty the host's /tmp).
 * - /etc/systemd/system is an empty tmpfs: none of the host's enabled services (databases, sshd, timesyncd) is
 *   seen, and every unit of sysinit.target.wants but journald is masked there (sysctl, modules-load, binfmt,
 *   tmpfiles-setup-dev write kernel or /dev state that no mount namespace keeps private).
 * - /sys is read-only, and /proc/sys while systemd boots, so its own start-up writes (fs.nr_open, fs.file-max)
 *   fail instead of changing the host's kernel. /proc/sys is uncovered once it has booted: the kernel refuses a
 *   fresh /proc in a user namespace while part of the mount namespace's /proc is covered, and the agent's sandbox
 *   mounts one for every command. /sys/fs/cgroup is a cgroup2 mount of a cgroup made for this namespace.
 * - /dev/console is the pty `script` gives the launcher (systemd logs only to a terminal): systemd's log goes to
 *   this process (diagnostics()), not to the VM's serial console.
 * The network namespace is the host's: the agent inside reaches the test gateway on localhost.
 * stop() kills everything in the namespace's cgroup at once (cgroup.kill), removes the cgroup and the temp dir;
 * an exit handler does the same if the test process ends first.
 */

/** Why a systemd namespace cannot be started here, or undefined when it can. */
export function systemdNamespaceUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `${process.platform} is not Linux`;
  if (process.getuid?.() !== 0) return 'not root (namespaces, mounts and cgroups need root)';
  if (!existsSync(SYSTEMD)) return `${SYSTEMD} is not installed (apt-get install systemd)`;
  for (const tool of ['unshare', 'nsenter', 'mount'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed (util-linux)`;
  if (!readFileSync('/proc/filesystems', 'utf8').includes('\toverlay\n')) return 'the kernel has no overlayfs';
  if (ownCgroup2() === undefined) return 'no writable cgroup2 hierarchy is mounted (systemd needs one)';
  return undefined;
}

const SYSTEMD = '/lib/systemd/systemd';

/** The directory of this process's cgroup in the host's cgroup2 hierarchy (where the namespace's cgroup goes). */
function ownCgroup2(): string | undefined {
  const mount = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
  const path = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'))
    ?.slice(3);
  if (mount === undefined || path === undefined || path.includes('..')) return undefined;
  const dir = join(mount[4] as string, path);
  try {
    return statSync(join(dir, 'cgroup.procs')).isFile() ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs inside the new namespaces as their PID 1, then becomes systemd. $1: the temp dir (upper layers, console);
 * $2 (optional): a host directory that stays visible at its own path although /tmp is covered (a checkout under
 * /tmp, as CI's clean clone is: the gateway unit's test bind-mounts it at /opt/letkite).
 * The unit it boots, letkite-test.target, pulls in nothing but the journal's socket; units started later (the
 * installer's letkite-agent.service) bring sysinit.target with them, masked down to the journal.
 */
const STAGE2 = `set -eu
d=$1
keep=\${2:-}
for x in etc var opt home; do
  mkdir -p "$d/$x.upper" "$d/$x.work"
  mount -t overlay overlay -o "lowerdir=/$x,upperdir=$d/$x.upper,workdir=$d/$x.work" "/$x"
done
mount -t tmpfs -o mode=0755 tmpfs /etc/systemd/system
printf '[Unit]\\nDescription=LetKite test boot\\nWants=systemd-journald.socket\\n' > /etc/systemd/system/letkite-test.target
# The journal of this namespace only, not the host kernel's log.
mkdir -p /etc/systemd/journald.conf.d
printf '[Journal]\\nReadKMsg=no\\n' > /etc/systemd/journald.conf.d/letkite-test.conf
for u in $(ls /lib/systemd/system/sysinit.target.wants); do
  [ "$u" = systemd-journald.service ] || ln -s /dev/null "/etc/systemd/system/$u"
done
mount --bind "$(tty)" /dev/console
mount -t tmpfs -o mode=0755 tmpfs /run
if [ -n "$keep" ]; then mkdir -p /run/letkite-keep && mount --bind "$keep" /run/letkite-keep; fi
mount -o remount,bind,ro /sys
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mount -t tmpfs -o mode=1777 tmpfs /tmp
if [ -n "$keep" ]; then mkdir -p "$keep" && mount --move /run/letkite-keep "$keep" && rmdir /run/letkite-keep; fi
exec env -i container=letkite-test PATH=/usr/sbin:/usr/bin:/sbin:/bin ${SYSTEMD} --system \\
  --unit=letkite-test.target --log-target=console --log-level=info --show-status=yes
`;

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const live = new Set<SystemdNamespace>();
process.on('exit', () => {
  for (const ns of live) ns.killNow();
});

export class SystemdNamespace {
  /** systemd's PID as the host sees it (nsenter's target). */
  private systemdPid = 0;
  private output = '';
  private readonly exited: Promise<void>;

  private constructor(
    private readonly dir: string,
    private readonly cgroup: string,
    private readonly launcher: ChildProcess,
  ) {
    launcher.stdout?.on('data', (c: Buffer) => {
      this.output += c.toString();
    });
    launcher.stderr?.on('data', (c: Buffer) => {
      this.output += c.toString();
    });
    this.exited = new Promise((r) => launcher.on('exit', () => r()));
  }

  /** Starts systemd in fresh namespaces and waits until it has finished booting. */
  static async start(options: { keepVisible?: string } = {}): Promise<SystemdNamespace> {
    const reason = systemdNamespaceUnavailable();
    if (reason !== undefined) throw new Error(`no systemd namespace here: ${reason}`);
    const parent = ownCgroup2() as string;
    removeStaleCgroups(parent);
    const dir = tempDir('systemd-ns');
    const cgroup = join(parent, `${CGROUP_PREFIX}${randomBytes(6).toString('hex')}`);
    mkdirSync(cgroup);
    writeFileSync(join(dir, 'stage2.sh'), STAGE2);
    // The launcher joins the new cgroup before unsharing: the cgroup namespace's root is then that cgroup, and
    // everything systemd starts stays below it (one cgroup.kill ends it all). If this test process dies without
    // its exit handler (SIGKILL), the chain still ends: script gets SIGKILL with its parent (pdeathsig), its pty
    // hangs up unshare, and unshare's --kill-child takes systemd, PID 1 of the namespace, and so all of it.
    const launcher = spawn(
      'sh',
      [
        '-c',
        'echo $$ > "$1/cgroup.procs" && exec setpriv --pdeathsig KILL script -qfec "unshare --pid --mount --uts --ipc --cgroup --fork --kill-child --propagation private --mount-proc sh $2/stage2.sh $2 $3" /dev/null',
        'launcher',
        cgroup,
        dir,
        options.keepVisible ?? '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const ns = new SystemdNamespace(dir, cgroup, launcher);
    live.add(ns);
    try {
      ns.systemdPid = await waitFor(
        () => `systemd to start in the namespace\n${ns.diagnostics()}`,
        // systemd moves itself into init.scope of its cgroup namespace; the host reads its PID there.
        () => Number(readFileSync(join(cgroup, 'init.scope/cgroup.procs'), 'utf8').split('\n')[0]) || undefined,
        20_000,
      );
      await waitFor(
        () => `systemd in the namespace to finish booting\n${ns.diagnostics()}`,
        async () => {
          const r = await ns.run(['systemctl', 'is-system-running']);
          return ['running', 'degraded'].includes(r.stdout.trim());
        },
        60_000,
      );
      const uncover = await ns.run(['umount', '/proc/sys']);
      if (uncover.code !== 0) throw new Error(`umount /proc/sys in the namespace: ${uncover.stderr}`);
      return ns;
    } catch (err) {
      await ns.stop();
      throw err;
    }
  }

  /** Runs argv inside every namespace of the systemd (nsenter -a), with a plain root environment. */
  run(argv: string[], options: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
    const child = spawn('nsenter', ['-t', String(this.systemdPid), '-a', '--', ...argv], {
      cwd: '/',
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8' },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    // A command that exits before reading its input must not fail the test with EPIPE.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    return new Promise((resolve) =>
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      }),
    );
  }

  /** A file's text as the namespace sees it. */
  async readFile(path: string): Promise<string> {
    const r = await this.run(['cat', '--', path]);
    if (r.code !== 0) throw new Error(`cat ${path} in the namespace: ${r.stderr}`);
    return r.stdout;
  }

  /** systemd's console log and the launcher's output: for a failure's message. */
  diagnostics(): string {
    return `--- systemd's console (the last 8000 characters):\n${this.output.slice(-8000)}`;
  }

  /** Kills every process of the namespace at once (synchronous: also used from the exit handler). */
  killNow(): void {
    try {
      writeFileSync(join(this.cgroup, 'cgroup.kill'), '1');
    } catch {
      // cgroup.kill needs Linux 5.14; killing PID 1 of a PID namespace ends the others too.
      for (const pid of [this.systemdPid, this.launcher.pid])
        try {
          if (pid) process.kill(pid, 'SIGKILL');
        } catch {}
    }
  }

  /** Kills the namespace, waits for it to be gone, removes its cgroup and the temp dir (upper layers). */
  async stop(): Promise<void> {
    if (!live.has(this)) return;
    this.killNow();
    await this.exited;
    await waitFor(
      `the namespace's cgroup ${this.cgroup} to empty and go`,
      () => {
        removeCgroupTree(this.cgroup);
        return !existsSync(this.cgroup);
      },
      10_000,
    );
    live.delete(this);
    removeDir(this.dir);
  }
}

const CGROUP_PREFIX = 'letkite-systemd-';

/**
 * Removes the empty cgroups of namespaces whose test process was killed before stop() (their processes went with
 * it, see start(); an empty cgroup is all that is left). Only ones older than a minute: a cgroup just made by a
 * parallel start() is empty until its launcher joins it.
 */
function removeStaleCgroups(parent: string): void {
  for (const name of readdirSync(parent)) {
    const dir = join(parent, name);
    try {
      if (!name.startsWith(CGROUP_PREFIX) || Date.now() - statSync(dir).mtimeMs < 60_000) continue;
      if (readFileSync(join(dir, 'cgroup.events'), 'utf8').includes('populated 0')) removeCgroupTree(dir);
    } catch {
      // Gone meanwhile, or populated again below: not stale.
    }
  }
}

/** rmdir the cgroup's descendants, deepest first, then itself (a cgroup is removed with rmdir only). */
function removeCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeCgroupTree(join(dir, e.name));
  rmdirSync(dir);
}
