import type { Analysis } from './analysis';
import { parseOptions } from './options';
import { evidenceName, isDiskDevice, normalizeAbsolutePath } from './paths';
import type { Verdict } from './policy-schema';
import type { Node } from './shell-parser';
import type { Arg } from './types';

/**
 * The built-in layers, always on (DESIGN §4): wiping a system is denied whatever the policy says; risky commands
 * need the AI to resend with `confirm=true`. They read the words for evidence: an unknown part of a word counts
 * as empty (`rm -rf "$DIR/"` is `rm -rf /` when DIR is unset), and `$HOME` counts as `~`.
 */
export interface BuiltinFinding {
  layer: 'catastrophic' | 'risky' | 'unattended';
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
  if (name === 'find') {
    const starts = words.all
      .slice(1)
      .filter((_arg, i, all) => all.slice(0, i + 1).every((a) => !/^[-(!]/.test(a.value)));
    const target = starts.find((arg) => isProtectedTarget(evidenceValue(arg)));
    if (target && words.all.some((arg) => arg.value === '-delete')) return `find -delete under ${target.display}`;
    const exec = words.all.findIndex((arg) => /^-(exec|execdir|ok|okdir)$/.test(arg.value));
    const run = exec > 0 ? evidenceName(words.all[exec + 1]?.value ?? '') : '';
    if (target && /^(rm|shred|unlink|wipe|srm|truncate|dd|mv|chmod|chown|chattr|setfacl)$/.test(run)) {
      return `find ${target.display} -exec ${run}: the same as a recursive ${run} of ${target.display}`;
    }
  }
  return wipeEquivalent(words);
}

const partitionTools = /^(fdisk|sfdisk|cfdisk|parted|sgdisk|gdisk|cgdisk|fixparts)$/;
/** Options with which a partition tool only prints. */
const partitionListing: Record<string, RegExp> = {
  fdisk: /^(-l|--list|-x|--list-details|--help|-h|--version|-V)$/,
  sfdisk:
    /^(-l|--list|-F|--list-free|-d|--dump|-J|--json|-s|--show-size|-V|--verify|-g|--show-geometry|-T|--list-types|--help|-h|--version|-v)$/,
  parted: /^(-l|--list|--help|-h|--version|-v)$/,
  sgdisk: /^(-p|--print|-i|--info|-v|--verify|-L|--list-types|-O|--print-mbr|--help|-h|-V|--version)$/,
  gdisk: /^(-l)$/,
};

function deviceOperand(words: Words): Arg | undefined {
  return words.all.slice(1).find((arg) => isDiskDevice(evidenceValue(arg).replace(/^(of|if)=/, '')));
}

/** Commands that wipe as thoroughly as `rm -rf /`, spelled with other tools. */
function wipeEquivalent(words: Words): string | undefined {
  const { name, operands, all } = words;
  const protectedOperand = () => operands.find((arg) => isProtectedTarget(evidenceValue(arg)));
  const values = all.slice(1).map((arg) => arg.value);
  if (name === 'rsync' && values.some((v) => /^--(delete|del$|remove-source-files)/.test(v))) {
    const destination = operands.at(-1);
    if (destination && operands.length >= 2 && isProtectedTarget(evidenceValue(destination).replace(/^[^/:~]*:/, ''))) {
      return `rsync --delete into ${destination.display} deletes everything there the source lacks`;
    }
    if (values.some((v) => v.startsWith('--remove-source-files'))) {
      const source = operands.slice(0, -1).find((arg) => isProtectedTarget(evidenceValue(arg)));
      if (source) return `rsync --remove-source-files deletes ${source.display}`;
    }
  }
  if (/^(g?tar|bsdtar)$/.test(name) && values.some((v) => v === '--remove-files')) {
    const target = protectedOperand();
    if (target) return `tar --remove-files deletes ${target.display}`;
  }
  if (name === 'zip' && (hasShort(words, 'm') || hasLong(words, 'move'))) {
    const target = protectedOperand();
    if (target) return `zip -m deletes ${target.display} after archiving it`;
  }
  if (name === 'git') {
    const clean = values.indexOf('clean');
    const dirIndex = values.indexOf('-C');
    const dir = dirIndex >= 0 && dirIndex < clean ? all[dirIndex + 2] : undefined;
    if (clean >= 0 && values.slice(clean + 1).some((v) => /^-[a-zA-Z]*f/.test(v) || v === '--force')) {
      const paths = all.slice(clean + 2).filter((arg) => !arg.value.startsWith('-'));
      const target = [dir, ...paths].find((arg) => arg && isProtectedTarget(evidenceValue(arg)));
      if (target) return `git clean -f of ${target.display}`;
    }
  }
  if (['chmod', 'chown', 'chgrp', 'chattr', 'setfacl', 'chcon', 'setfattr'].includes(name)) {
    const target = operands.slice(name === 'setfacl' || name === 'setfattr' ? 0 : 1).find((arg) => {
      const value = evidenceValue(arg);
      return isProtectedTarget(value) && !/^~/.test(value);
    });
    if (target) return `${name} of ${target.display} can make the whole system unusable`;
  }
  const listing = partitionListing[name];
  if (partitionTools.test(name) && deviceOperand(words) && !(listing && values.some((v) => listing.test(v)))) {
    const partedPrintOnly =
      name === 'parted' &&
      operands.length > 1 &&
      operands.slice(1).every((arg) => /^(print|p|unit|s|B|KiB|MiB|GiB|compact|chs|cyl|%)$/.test(arg.value));
    if (!partedPrintOnly) {
      return `${name} rewrites the partition table of ${deviceOperand(words)?.display}`;
    }
  }
  if (
    name === 'cryptsetup' &&
    values.some((v) => /^(luksFormat|erase|luksErase|luksKillSlot|luksRemoveKey|reencrypt)$/.test(v))
  ) {
    return 'cryptsetup destroys or replaces the keys of an encrypted volume';
  }
  if (name === 'nvme' && /^(format|sanitize|delete-ns|write-zeroes|write-uncor)$/.test(operands[0]?.value ?? '')) {
    return `nvme ${operands[0]?.value} erases a disk`;
  }
  if (
    name === 'hdparm' &&
    values.some((v) =>
      /^--(security-erase|security-erase-enhanced|trim-sector-ranges|write-sector|make-bad-sector|security-set-pass|dco-restore)/.test(
        v,
      ),
    )
  ) {
    return 'hdparm erases or damages a disk';
  }
  if (
    /^(lvremove|vgremove|pvremove)$/.test(name) &&
    (hasShort(words, 'fy') || hasLong(words, 'force') || hasLong(words, 'yes'))
  ) {
    return `${name} -f deletes volumes without asking`;
  }
  if (name === 'zpool' && /^(destroy|labelclear)$/.test(operands[0]?.value ?? ''))
    return `zpool ${operands[0]?.value} destroys a pool`;
  if (name === 'zfs' && operands[0]?.value === 'destroy' && hasShort(words, 'rR'))
    return 'zfs destroy -r destroys datasets and their children';
  if (name === 'mdadm' && values.some((v) => /^--zero-superblock/.test(v)))
    return 'mdadm --zero-superblock wipes RAID metadata';
  if (/^(sg_format|sg_sanitize|sg_unmap)$/.test(name)) return `${name} erases a disk`;
  if (name === 'badblocks' && (hasShort(words, 'w') || values.includes('-w'))) return 'badblocks -w overwrites a disk';
  if (name === 'flashrom' && values.some((v) => /^(-w|--write|-E|--erase)$/.test(v)))
    return 'flashrom rewrites the firmware';
  if (
    (name === '>' || name === 'tee' || name === 'dd' || name === 'cp') &&
    all
      .slice(1)
      .some(
        (arg) =>
          /^(of=)?\/proc\/sysrq-trigger$/.test(normalizeAbsolutePath(evidenceValue(arg).replace(/^of=/, ''))) ||
          /sysrq-trigger$/.test(evidenceValue(arg)),
      )
  ) {
    return 'writing to /proc/sysrq-trigger can crash or reboot the machine at once';
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

/**
 * Never unattended, whatever the policy (issue #11): persistence, access and defences. `deny` where there is no
 * safe way to do it by hand-written command at all (the account databases and the loader's preload list, which
 * lock everyone out or inject code into every process); `approve` (a human decides) for the rest.
 */
interface Guarded {
  re: RegExp;
  what: string;
  verdict: Verdict;
}

const home = '(~[^/]*|/root|/home/[^/]+|/Users/[^/]+)';
const guardedPaths: Guarded[] = [
  {
    re: /^\/etc\/(passwd|shadow|gshadow|group|sudoers|master\.passwd)-?$/,
    what: 'the account and sudo databases',
    verdict: 'deny',
  },
  { re: /^\/etc\/ld\.so\.preload$/, what: 'the loader preload list (code in every process)', verdict: 'deny' },
  {
    re: /^\/etc\/(cron(tab|\.d|\.daily|\.hourly|\.weekly|\.monthly|\.allow|\.deny)?|anacrontab)(\/|$)|^\/var\/spool\/(cron|anacron|at)(\/|$)/,
    what: 'cron',
    verdict: 'approve',
  },
  {
    re: /^\/((etc|lib|usr\/lib|usr\/local\/lib|run)\/systemd\/|etc\/init\.d\/|etc\/init\/|etc\/rc\.local$|etc\/rc\d\.d\/|etc\/xdg\/autostart\/)/,
    what: 'services started at boot',
    verdict: 'approve',
  },
  {
    re: new RegExp(`^${home}/\\.config/(systemd|autostart)(/|$)`),
    what: 'services started at login',
    verdict: 'approve',
  },
  {
    re: new RegExp(`(^${home}/\\.ssh(/|$))|(^|/)authorized_keys2?$|^/etc/ssh/`),
    what: 'SSH access',
    verdict: 'approve',
  },
  {
    re: /^\/etc\/(sudoers\.d|pam\.d|security|selinux|apparmor|apparmor\.d|audit|ufw|firewalld|iptables|nftables\.conf|modprobe\.d|modules-load\.d|modules$|udev\/rules\.d|polkit-1)(\/|$)|^\/etc\/(sudo\.conf|nsswitch\.conf|login\.defs|ld\.so\.conf(\.d)?|environment|profile(\.d)?|bash\.bashrc|zsh\/|skel\/)/,
    what: 'login, privileges and system defences',
    verdict: 'approve',
  },
  {
    re: new RegExp(
      `(^${home}/|^)\\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc|xprofile|xinitrc|xsessionrc)$|(^${home}/|^)\\.config/fish/`,
    ),
    what: 'shell start-up files',
    verdict: 'approve',
  },
  { re: /(^|\/)\.git\/hooks(\/|$)/, what: 'git hooks (they run on later git commands)', verdict: 'approve' },
];

function guardedTarget(value: string): Guarded | undefined {
  let path = value.replace(/^(of|--output|--output-document|--target-directory)=/, '');
  if (path.startsWith('/')) path = normalizeAbsolutePath(path);
  return guardedPaths.find((guarded) => guarded.re.test(path));
}

/** Programs that write the files named in their words (redirects are the command `>`). */
const writers =
  /^(>|tee|cp|mv|install|ln|dd|rsync|scp|truncate|touch|rm|unlink|shred|curl|wget|sed|gsed|perl|ed|ex|vi|vim|nvim|nano|emacs|code|mcedit|micro|joe|sudoedit|visudo|vipw|vigr|chmod|chown|chattr|setfacl|tar|unzip|cpio|patch|sponge|split|csplit|ssh-keygen|ssh-copy-id|mkdir|rmdir)$/;

const securityUnits =
  /^(firewalld|ufw|nftables|iptables|ip6tables|netfilter-persistent|apparmor|auditd|selinux.*|fail2ban|crowdsec|clamav.*|wazuh.*|osqueryd|falco)(\.service)?$/;

function unattended(words: Words): { verdict: Verdict; message: string } | undefined {
  const { name, all, operands } = words;
  const values = all.slice(1).map((arg) => arg.value);
  const inPlace = values.some((v) => /^-[A-Za-z]*i|^--in-place/.test(v));
  if (writers.test(name) && (!/^(g?sed|perl)$/.test(name) || inPlace)) {
    let written: readonly Arg[] = all.slice(1);
    if (/^(cp|rsync|scp|install)$/.test(name)) {
      // the destination: the last operand, or the value of -t/--target-directory
      const target = all.findIndex((arg) => /^(-[A-Za-z]*t|--target-directory(=.*)?)$/.test(arg.value));
      written = target > 0 ? all.slice(target, target + 2) : operands.slice(-1);
    } else if (name === 'tar') written = hasShort(words, 'x') || hasLong(words, 'extract') ? all.slice(1) : [];
    else if (name === 'unzip') written = all.slice(all.findIndex((arg) => arg.value === '-d') + 1 || all.length);
    for (const arg of written) {
      const guarded = guardedTarget(evidenceValue(arg));
      if (guarded) {
        return {
          verdict: guarded.verdict,
          message: `${name} writes ${arg.display} (${guarded.what}): never unattended`,
        };
      }
    }
  }
  if (name === 'ssh-copy-id')
    return { verdict: 'approve', message: 'ssh-copy-id adds an SSH key: SSH access is never changed unattended' };
  if (
    name === 'crontab' &&
    (hasShort(words, 'e') || operands.filter((arg, i) => all[all.indexOf(arg) - 1]?.value !== '-u' || i < 0).length > 0)
  )
    return { verdict: 'approve', message: 'crontab installs commands that run later' };
  if (name === 'systemctl') {
    const sub = operands.find((arg) => !arg.dynamic)?.value ?? '';
    if (
      /^(edit|link|enable|reenable|preset|preset-all|revert|set-property|add-wants|add-requires|set-default|daemon-reexec)$/.test(
        sub,
      )
    ) {
      return { verdict: 'approve', message: `systemctl ${sub} changes what starts on its own` };
    }
    if (/^(stop|disable|mask|kill)$/.test(sub) && operands.slice(1).some((arg) => securityUnits.test(arg.value))) {
      return { verdict: 'approve', message: `systemctl ${sub} turns a firewall or a security service off` };
    }
  }
  if (
    (name === 'service' || name === 'rc-service') &&
    securityUnits.test(operands[0]?.value ?? '') &&
    /^(stop|disable)$/.test(operands[1]?.value ?? '')
  ) {
    return { verdict: 'approve', message: `${name} stops a firewall or a security service` };
  }
  if (name === 'update-rc.d' || name === 'chkconfig' || name === 'rc-update')
    return { verdict: 'approve', message: `${name} changes what starts at boot` };
  if (
    name === 'ufw' &&
    /^(disable|reset|allow|default|delete|insert|--force)$/.test(operands[0]?.value ?? values[0] ?? '')
  ) {
    return { verdict: 'approve', message: 'ufw changes or turns off the firewall' };
  }
  if (
    /^(iptables|ip6tables)(-legacy|-nft)?$/.test(name) &&
    (hasShort(words, 'FXPDZ') || hasLong(words, 'flush') || hasLong(words, 'policy') || hasLong(words, 'delete-chain'))
  ) {
    return { verdict: 'approve', message: `${name} flushes the firewall or changes its policy` };
  }
  if (
    /^(iptables|ip6tables)-restore$/.test(name) ||
    (name === 'nft' && values.some((v) => /^(flush|delete|destroy|-f|--file)$/.test(v)))
  ) {
    return { verdict: 'approve', message: `${name} replaces or removes firewall rules` };
  }
  if (
    name === 'firewall-cmd' &&
    values.some((v) => !/^--(state|list-.*|get-.*|query-.*|info-.*|zone=.*|permanent|help|version)$/.test(v))
  ) {
    return { verdict: 'approve', message: 'firewall-cmd changes the firewall' };
  }
  if (name === 'pfctl' && hasShort(words, 'dF'))
    return { verdict: 'approve', message: 'pfctl turns off or flushes the firewall' };
  if (
    name === 'netsh' &&
    values.some((v) => /^(advfirewall|firewall)$/i.test(v)) &&
    values.some((v) => /^(set|reset|delete|off)$/i.test(v))
  ) {
    return { verdict: 'approve', message: 'netsh changes the Windows firewall' };
  }
  if (
    /^(set-netfirewallprofile|disable-netfirewallrule|remove-netfirewallrule|set-mppreference|add-mppreference)$/.test(
      name,
    )
  ) {
    return { verdict: 'approve', message: `${name} weakens Windows defences` };
  }
  if (name === 'setenforce' || (name === 'setsebool' && operands.length > 0))
    return { verdict: 'approve', message: `${name} changes SELinux enforcement` };
  if (/^(aa-disable|aa-complain|aa-teardown|apparmor_parser)$/.test(name))
    return { verdict: 'approve', message: `${name} weakens AppArmor` };
  if (name === 'auditctl' && values.some((v) => /^(-e|-D|-d|-W)$/.test(v)))
    return { verdict: 'approve', message: 'auditctl turns auditing off or removes audit rules' };
  if (
    /^(useradd|adduser|usermod|groupadd|addgroup|groupmod|gpasswd|chpasswd|chage|chsh|newusers|passwd|visudo|vipw|vigr|pwck)$/.test(
      name,
    )
  ) {
    if (name === 'passwd' && (hasShort(words, 'd') || hasLong(words, 'delete')))
      return { verdict: 'deny', message: 'passwd -d leaves an account without a password' };
    if (
      name === 'passwd' &&
      values.every((v) => /^-[Sa]+$|^--status$/.test(v) || !v.startsWith('-')) &&
      hasShort(words, 'S')
    )
      return undefined;
    return { verdict: 'approve', message: `${name} changes accounts, passwords or sudo rights` };
  }
  if (/^(insmod|modprobe)$/.test(name) && !hasShort(words, 'rnDc') && operands.length > 0)
    return { verdict: 'approve', message: `${name} loads code into the kernel` };
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

for (const name of (
  '> git zip tar gtar bsdtar chattr setfacl chcon setfattr fdisk sfdisk cfdisk parted sgdisk gdisk cgdisk fixparts ' +
  'cryptsetup nvme hdparm lvremove vgremove pvremove zpool zfs mdadm sg_format sg_sanitize sg_unmap badblocks flashrom ' +
  'install ln scp truncate touch unlink curl wget sed gsed perl ed ex vi vim nvim nano emacs code mcedit micro joe ' +
  'sudoedit visudo vipw vigr unzip cpio patch sponge split csplit ssh-keygen ssh-copy-id mkdir update-rc.d chkconfig ' +
  'rc-update firewall-cmd set-netfirewallprofile disable-netfirewallrule remove-netfirewallrule set-mppreference ' +
  'add-mppreference setenforce setsebool aa-disable aa-complain aa-teardown apparmor_parser auditctl useradd adduser ' +
  'usermod groupadd addgroup groupmod gpasswd chpasswd chage chsh newusers passwd pwck insmod modprobe ' +
  'iptables-restore ip6tables-restore'
).split(' ')) {
  watchedPrograms.add(name);
}

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
  const guarded = unattended(words);
  if (guarded) findings.push({ layer: 'unattended', ...guarded });
  const dangerous = risky(words);
  if (dangerous)
    findings.push({ layer: 'risky', verdict: 'confirm', message: `${dangerous}: resend with confirm=true` });
  return findings;
}

const loops = new Set(['while_statement', 'until_statement', 'c_style_for_statement']);

/**
 * An endless loop that starts a background job on every turn (`while :; do x & done`, `for ((;;)); do x & done`)
 * exhausts the process table like a fork bomb: catastrophic. Called by the walk for every node.
 */
export function checkSpawnLoop(node: Node, acc: Analysis): void {
  if (!loops.has(node.type)) return;
  let body: Node | null = null;
  const condition: Node[] = [];
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'do_group') body = child;
    else if (child.type !== 'comment') condition.push(child);
  }
  if (!body) return;
  const text = condition.map((child) => child.text.trim()).join(' ');
  const endless =
    node.type === 'c_style_for_statement'
      ? !/;\s*[^;\s)][^;]*;/.test(node.text.slice(0, node.text.indexOf('do')))
      : node.type === 'while_statement' && !node.text.startsWith('until')
        ? /^(:|true|\[ 1 \]|\(\( *1 *\)\)|\/bin\/true|\/usr\/bin\/true)$/.test(text) || text === ''
        : /^(false|\/bin\/false|\/usr\/bin\/false|! *(:|true))$/.test(text);
  if (!endless) return;
  let background = false;
  let waits = false;
  const scan = (n: Node) => {
    if (!n.isNamed && n.type === '&') background = true;
    if (n.type === 'command' && /^(wait|break|exit|return)\b/.test(n.text)) waits = true;
    for (const child of n.children) if (child) scan(child);
  };
  scan(body);
  if (background && !waits) acc.catastrophic([], 'an endless loop starts a background job on every turn: a fork bomb');
}

const runners = /^(sh|bash|dash|zsh|ksh|mksh|ash|fish|source|\.|python[0-9.]*|perl|ruby|node|php|pwsh|powershell)$/;

/** The files a download writes: `curl -o F`, `curl -O URL` (its last path part), `wget URL`, `wget -O F`. */
function downloadedFiles(args: readonly Arg[]): string[] {
  const name = evidenceName(args[0]?.value ?? '');
  if (name !== 'curl' && name !== 'wget') return [];
  const files: string[] = [];
  const urls = args.slice(1).filter((arg) => /^[a-z]+:\/\//i.test(arg.value));
  const remoteName = () =>
    urls
      .map(
        (url) =>
          url.value
            .replace(/[?#].*$/, '')
            .split('/')
            .pop() ?? '',
      )
      .filter(Boolean);
  for (let i = 1; i < args.length; i++) {
    const value = args[i]?.value ?? '';
    const next = args[i + 1]?.value ?? '';
    if (name === 'curl' && (value === '-o' || value === '--output')) files.push(next);
    else if (name === 'curl' && /^-o./.test(value)) files.push(value.slice(2));
    else if (name === 'curl' && (value === '-O' || value === '--remote-name' || /^-[a-zA-Z]*O$/.test(value)))
      files.push(...remoteName());
    else if (name === 'wget' && (value === '-O' || value === '--output-document')) files.push(next);
    else if (name === 'wget' && /^--output-document=/.test(value)) files.push(value.slice(18));
  }
  if (name === 'wget' && files.length === 0) files.push(...remoteName());
  return files.filter((file) => file !== '' && file !== '-');
}

/**
 * Findings about the line as a whole: a file downloaded and then run in the same line (`curl -o x.sh URL && sh
 * x.sh`) is piping a download into a shell by another name: never unattended.
 */
export function lineFindings(
  records: ReadonlyArray<{ args: readonly Arg[] }>,
): Array<BuiltinFinding & { command: string[] }> {
  const downloaded = new Set<string>();
  for (const record of records) {
    for (const file of downloadedFiles(record.args)) {
      downloaded.add(file);
      downloaded.add(file.split('/').pop() ?? file);
    }
  }
  if (downloaded.size === 0) return [];
  for (const record of records) {
    const [program, ...rest] = record.args;
    if (!program || program.dynamic) continue;
    const base = (value: string) => value.split('/').pop() ?? value;
    const runsFile = runners.test(evidenceName(program.value))
      ? rest.some((arg) => downloaded.has(arg.value) || downloaded.has(base(arg.value)))
      : program.value.includes('/') && downloaded.has(base(program.value));
    const makesExecutable =
      evidenceName(program.value) === 'chmod' && rest.some((arg) => downloaded.has(base(arg.value)));
    if (runsFile || makesExecutable) {
      return [
        {
          command: record.args.map((arg) => arg.display),
          layer: 'unattended',
          verdict: 'approve',
          message: 'runs a file downloaded in the same line: the same as piping a download into a shell',
        },
      ];
    }
  }
  return [];
}
