import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/**
 * A private OpenSSH server on a loopback port with a throwaway host key and client key — the real alternative the
 * benchmarks compare against. Needs Debian's openssh-server (`apt-get install openssh-server`).
 */
export class LocalSshd {
  private proc: ChildProcess | null = null;
  readonly clientKey: string;

  constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.clientKey = join(dir, 'client_key');
  }

  static available(): boolean {
    return existsSync('/usr/sbin/sshd') && existsSync('/usr/bin/ssh');
  }

  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    mkdirSync('/run/sshd', { recursive: true });
    const hostKey = join(this.dir, 'host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', this.clientKey]);
    const authorized = join(this.dir, 'authorized_keys');
    execFileSync('cp', [`${this.clientKey}.pub`, authorized]);
    const config = join(this.dir, 'sshd_config');
    writeFileSync(
      config,
      [
        `Port ${this.port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `AuthorizedKeysFile ${authorized}`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        'UsePAM no',
        'UseDNS no',
        `PidFile ${join(this.dir, 'sshd.pid')}`,
        'Subsystem sftp internal-sftp',
        '',
      ].join('\n'),
    );
    this.proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: 'ignore' });
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      try {
        execFileSync('ssh', [...this.sshArgs(), 'true'], { stdio: 'ignore' });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('sshd did not start');
  }

  /** Arguments for `ssh` (before the remote command). */
  sshArgs(extra: string[] = []): string[] {
    return [
      '-i',
      this.clientKey,
      '-p',
      String(this.port),
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'LogLevel=ERROR',
      '-o',
      'BatchMode=yes',
      ...extra,
      `${userInfo().username}@127.0.0.1`,
    ];
  }

  stop(): void {
    this.proc?.kill('SIGTERM');
  }
}
