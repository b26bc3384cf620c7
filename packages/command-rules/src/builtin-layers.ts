import { parseOptions } from './options';
import { evidenceName, isDiskDevice, normalizeAbsolutePath } from './paths';
import type { Verdict } from './policy-schema';
import type { Arg } from './types';

/**
 * The built-in layers, always on (DESIGN §4): wiping a system is denied whatever the policy says; risky commands
 * need the AI to resend with `confirm=true`. They read the words for evidence: an unknown part of a word counts
 * as empty (`rm -rf "$DIR/"` is `rm -rf /` when DIR is unset), and `$HOME` counts as `~`.
 */
export interface BuiltinFinding {
  layer: 'catastrophic' | 'risky';
  verdict: Verdict;
  message: string;
}

const topLevelSystemDirs = [
  'bin',
  'boot',
  'dev',
  'etc',
  'home',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'opt',
  'proc',
  'root',
  'run',
  'sbin',
  'srv',
  'sys',
  'usr',
  'var',
  'snap',
  'mnt',
  'media',
  'nix',
  'Applications',
  'Library',
  'System',
  'Users',
  'private',
];

function evidenceValue(arg: Arg): string {
  let value = '';
  for (const seg of arg.segments) {
    if ('lit' in seg) value += seg.lit;
    else if (seg.name === 'HOME') value += '~';
  }
  return value;
}

/** `/`, `/*`, `~`, a top-level system directory, a drive root: what a recursive delete must never reach. */
export function isProtectedTarget(raw: string): boolean {
  const value = raw.trim();
  if (value === '') return false;
  if (/^~[^/]*(\/+(\.|\*|\.\*)?)*$/.test(value)) return true;
  if (/^[a-zA-Z]:([\\/]+(\*(\.\*)?)?)?$/.test(value)) return true;
  if (!value.startsWith('/')) return false;
  const stripped = value.replace(/(\/+(\*|\.\*|\.))+\/*$/, '');
  const normalized = normalizeAbsolutePath(stripped === '' ? '/' : stripped);
  if (normalized === '/') return true;
  const parts = normalized.split('/').filter(Boolean);
  if (parts.length !== 1) return false;
  const part = parts[0] as string;
  if (topLevelSystemDirs.includes(part)) return true;
  if (/[*?[]/.test(part)) {
    const re = new RegExp(
      `^${part
        .replace(/[.+^${}()|\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    return topLevelSystemDirs.some((dir) => re.test(dir));
  }
  return false;
}

interface Words {
  name: string;
  options: string[];
  operands: Arg[];
  /** An unquoted expansion that could turn into any options. */
  unknownOptions: boolean;
  all: Arg[];
}

function splitWords(args: readonly Arg[]): Words {
  const options: string[] = [];
  const operands: Arg[] = [];
  let unknownOptions = false;
  let endOfOptions = false;
  for (const arg of args.slice(1)) {
    if (arg.dynamic && arg.splittable) unknownOptions = true;
    if (!endOfOptions && !arg.dynamic && arg.value === '--') endOfOptions = true;
    else if (!endOfOptions && !arg.dynamic && arg.value.startsWith('-') && arg.value.length > 1)
      options.push(arg.value);
    else operands.push(arg);
  }
  return { name: evidenceName(args[0]?.value ?? ''), options, operands, unknownOptions, all: [...args] };
}

function hasShort(words: Words, letters: string): boolean {
  return words.options.some((option) => /^-[^-]/.test(option) && [...option.slice(1)].some((l) => letters.includes(l)));
}

function hasLong(words: Words, name: string, minimum = 3): boolean {
  return words.options.some((option) => {
    if (!option.startsWith('--')) return false;
    const given = option.slice(2).split('=')[0] as string;
    return given.length >= minimum && name.startsWith(given);
  });
}

function isRecursiveRm(words: Words): boolean {
  return hasShort(words, 'rR') || hasLong(words, 'recursive') || words.unknownOptions;
}

function isRecursiveWindowsRemove(words: Words): boolean {
  if (words.name === 'remove-item' || words.name === 'ri') {
    return words.options.some((option) => /^-r(e(c(u(r(s(e)?)?)?)?)?)?$/i.test(option));
  }
  return words.all.some((arg, i) => i > 0 && /^\/s$/i.test(arg.value));
}

const mkfsLike = /^(mkfs(\..*)?|mke2fs|mkswap|mkntfs|mkdosfs|mkexfatfs|newfs.*|wipefs|blkdiscard)$/;

function catastrophic(words: Words): string | undefined {
  const { name, operands } = words;
  const protectedOperand = () => operands.find((arg) => isProtectedTarget(evidenceValue(arg)));
  if (name === 'rm' && isRecursiveRm(words)) {
    const target = protectedOperand();
    if (target) return `recursive delete of ${target.display}`;
  }
  if (['remove-item', 'ri', 'rd', 'rmdir', 'del', 'erase'].includes(name) && isRecursiveWindowsRemove(words)) {
    const target = words.all.slice(1).find((arg) => !/^[-/]/.test(arg.value) && isProtectedTarget(evidenceValue(arg)));
    if (target) return `recursive delete of ${target.display}`;
  }
  if (mkfsLike.test(name)) return `${name} destroys a file system`;
  if (['format-volume', 'clear-disk', 'initialize-disk'].includes(name)) return `${name} destroys a disk`;
  if (name === 'format' && words.all.some((arg) => /^[a-zA-Z]:\\?$/.test(arg.value))) return 'format erases a drive';
  if (name === 'dd') {
    const output = words.all.find((arg) => arg.value.startsWith('of=') && isDiskDevice(evidenceValue(arg).slice(3)));
    if (output) return `dd writes to the device ${output.display.slice(3)}`;
  }
  if (name === 'shred' || name === 'tee') {
    const device = operands.find((arg) => isDiskDevice(evidenceValue(arg)));
    if (device) return `${name} overwrites the device ${device.display}`;
  }
  if (['cp', 'mv', 'install', 'pv', 'rsync'].includes(name)) {
    const destination = operands.at(-1);
    if (destination && operands.length >= 2 && isDiskDevice(evidenceValue(destination))) {
      return `${name} writes to the device ${destination.display}`;
    }
  }
  if (name === 'mv') {
    const source = operands.slice(0, -1).find((arg) => isProtectedTarget(evidenceValue(arg)));
    if (source) return `moves ${source.display} away`;
  }
  if (['chmod', 'chown', 'chgrp'].includes(name) && (hasShort(words, 'R') || hasLong(words, 'recursive'))) {
    const target = protectedOperand();
    if (target) return `recursive ${name} of ${target.display}`;
  }
  if (name === 'find' && words.all.some((arg) => arg.value === '-delete')) {
    const starts = words.all
      .slice(1)
      .filter((_arg, i, all) => all.slice(0, i + 1).every((a) => !/^[-(!]/.test(a.value)));
    const target = starts.find((arg) => isProtectedTarget(evidenceValue(arg)));
    if (target) return `find -delete under ${target.display}`;
  }
  return undefined;
}

const systemctlRisky = new Set([
  'stop',
  'disable',
  'mask',
  'kill',
  'reboot',
  'poweroff',
  'halt',
  'kexec',
  'suspend',
  'hibernate',
  'hybrid-sleep',
  'suspend-then-hibernate',
  'rescue',
  'emergency',
  'isolate',
  'soft-reboot',
  'switch-root',
  'exit',
]);

/** Package removal: program → subcommands (or option patterns) that remove packages. */
const packageRemoval: Record<string, RegExp> = {
  apt: /^(remove|purge|autoremove|autopurge)$/,
  'apt-get': /^(remove|purge|autoremove|autopurge)$/,
  aptitude: /^(remove|purge)$/,
  dnf: /^(remove|erase|autoremove)$/,
  yum: /^(remove|erase|autoremove)$/,
  microdnf: /^(remove)$/,
  tdnf: /^(remove|erase|autoremove)$/,
  zypper: /^(remove|rm)$/,
  apk: /^(del)$/,
  snap: /^(remove)$/,
  flatpak: /^(uninstall|remove)$/,
  brew: /^(uninstall|remove|rm)$/,
  port: /^(uninstall)$/,
  pkg: /^(delete|remove)$/,
  winget: /^(uninstall|remove|rm)$/,
  choco: /^(uninstall)$/,
  'xbps-remove': /.*/,
};

function risky(words: Words): string | undefined {
  const { name, operands, options } = words;
  const first = operands.find((arg) => !arg.dynamic)?.value;
  if (['reboot', 'shutdown', 'poweroff', 'halt', 'restart-computer', 'stop-computer'].includes(name)) {
    return `${name} takes the machine down`;
  }
  if ((name === 'init' || name === 'telinit') && /^[016sS]$/.test(first ?? ''))
    return `${name} ${first} changes the runlevel`;
  if (name === 'systemctl') {
    const parsed = parseOptions(words.all, {
      short: 'tspHMnoP',
      long: [
        'type',
        'signal',
        'property',
        'host',
        'machine',
        'lines',
        'output',
        'root',
        'state',
        'kill-whom',
        'job-mode',
      ],
    });
    const sub = parsed.rest[0];
    if (parsed.unknown || (sub && (sub.dynamic || systemctlRisky.has(sub.value)))) {
      return `systemctl ${sub?.display ?? ''} stops or disables services or the machine`;
    }
  }
  if ((name === 'service' || name === 'rc-service') && operands[1]?.value === 'stop') return `${name} stops a service`;
  if (name === 'sc' && /^(stop|delete|config)$/i.test(first ?? '')) return `sc ${first} changes a service`;
  if (name === 'net' && /^stop$/i.test(first ?? '')) return 'net stop stops a service';
  if (name === 'stop-service') return 'Stop-Service stops a service';
  const removal = packageRemoval[name];
  if (removal && first !== undefined && removal.test(first)) return `${name} ${first} removes packages`;
  if (name === 'xbps-remove') return 'xbps-remove removes packages';
  if (name === 'pacman' && (options.some((o) => /^-R/.test(o)) || hasLong(words, 'remove'))) {
    return 'pacman -R removes packages';
  }
  if (
    name === 'dpkg' &&
    (options.some((o) => /^-[A-Za-z]*[rP]/.test(o)) || hasLong(words, 'remove') || hasLong(words, 'purge'))
  ) {
    return 'dpkg removes packages';
  }
  if (name === 'rpm' && (options.some((o) => /^-[A-Za-z]*e/.test(o)) || hasLong(words, 'erase')))
    return 'rpm -e removes packages';
  if (name === 'emerge' && (hasShort(words, 'C') || hasLong(words, 'unmerge')))
    return 'emerge --unmerge removes packages';
  if (name === 'nix-env' && (hasShort(words, 'e') || hasLong(words, 'uninstall'))) return 'nix-env -e removes packages';
  if (name === 'rm' && isRecursiveRm(words)) return 'recursive delete';
  if (['remove-item', 'ri', 'rd', 'rmdir', 'del', 'erase'].includes(name) && isRecursiveWindowsRemove(words)) {
    return 'recursive delete';
  }
  if (name === 'kill' && killsEverything(words)) return 'kill of every process (-1) or of init';
  if (name === 'killall5') return 'killall5 signals every process';
  if (name === 'crontab' && hasShort(words, 'r')) return 'crontab -r removes the crontab';
  if (['userdel', 'deluser', 'groupdel', 'delgroup', 'remove-localuser'].includes(name))
    return `${name} deletes an account`;
  if (/^(iptables|ip6tables|ebtables|arptables)(-legacy|-nft)?$/.test(name)) {
    if (hasShort(words, 'FX') || hasLong(words, 'flush') || hasLong(words, 'delete-chain'))
      return `${name} flushes firewall rules`;
  }
  if (name === 'nft' && words.all.some((arg) => arg.value === 'flush')) return 'nft flush removes firewall rules';
  if (name === 'ufw' && /^(disable|reset)$/.test(first ?? '')) return `ufw ${first} turns the firewall off`;
  if (name === 'pfctl' && hasShort(words, 'Fd')) return 'pfctl flushes or disables the firewall';
  if (name === 'netsh' && words.all.some((arg) => /^(reset|off)$/i.test(arg.value)))
    return 'netsh turns firewall rules off';
  if (name === 'ifdown') return 'ifdown cuts network access';
  if ((name === 'ip' || name === 'ifconfig') && words.all.some((arg) => arg.value === 'down')) {
    return `${name} … down cuts network access`;
  }
  return undefined;
}

function killsEverything(words: Words): boolean {
  const args = words.all.slice(1).map((arg) => arg.value);
  let i = 0;
  if (args[0] === '-s' || args[0] === '-n') i = 2;
  else if (args[0] && /^-[A-Za-z0-9]+$/.test(args[0]) && args[0] !== '-1') i = 1;
  else if (args[0] === '-1' && args.length > 1) i = 1;
  if (args[i] === '--') i++;
  return args.slice(i).some((target) => target === '-1' || target === '1');
}

/** Every program either layer looks at; anything else is skipped without splitting its words. */
const watchedPrograms = new Set([
  'rm',
  'remove-item',
  'ri',
  'rd',
  'rmdir',
  'del',
  'erase',
  'format-volume',
  'clear-disk',
  'initialize-disk',
  'format',
  'dd',
  'shred',
  'tee',
  'cp',
  'mv',
  'install',
  'pv',
  'rsync',
  'chmod',
  'chown',
  'chgrp',
  'find',
  'reboot',
  'shutdown',
  'poweroff',
  'halt',
  'restart-computer',
  'stop-computer',
  'init',
  'telinit',
  'systemctl',
  'service',
  'rc-service',
  'sc',
  'net',
  'stop-service',
  'pacman',
  'dpkg',
  'rpm',
  'emerge',
  'nix-env',
  'kill',
  'killall5',
  'crontab',
  'userdel',
  'deluser',
  'groupdel',
  'delgroup',
  'remove-localuser',
  'nft',
  'ufw',
  'pfctl',
  'netsh',
  'ifdown',
  'ip',
  'ifconfig',
  ...Object.keys(packageRemoval),
]);

/** The built-in findings for one command. */
export function builtinFindings(args: readonly Arg[]): BuiltinFinding[] {
  const name = args[0];
  if (!name || name.dynamic) return [];
  const program = evidenceName(name.value);
  if (
    !watchedPrograms.has(program) &&
    !mkfsLike.test(program) &&
    !/^(iptables|ip6tables|ebtables|arptables)/.test(program)
  ) {
    return [];
  }
  const words = splitWords(args);
  const findings: BuiltinFinding[] = [];
  const deadly = catastrophic(words);
  if (deadly) findings.push({ layer: 'catastrophic', verdict: 'deny', message: deadly });
  const dangerous = risky(words);
  if (dangerous)
    findings.push({ layer: 'risky', verdict: 'confirm', message: `${dangerous}: resend with confirm=true` });
  return findings;
}
