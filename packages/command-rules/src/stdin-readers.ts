import type { Reason } from './types';

/**
 * Programs that read a SCRIPT from their standard input when a call gives `stdin` (exec's `stdin` argument):
 * `{argv: ["bash"], stdin: "rm -rf x"}` runs `rm -rf x` although the command line names only `bash`. The stdin
 * text of such a call is judged as a command line of its own, with the same policy (see `judgeStdin`).
 */
const stdinShells = new Set([
  'sh',
  'bash',
  'dash',
  'ash',
  'zsh',
  'ksh',
  'ksh93',
  'mksh',
  'pdksh',
  'yash',
  'posh',
  'rbash',
  'lksh',
  'busybox',
]);

/**
 * Programs that run code or commands read from their standard input in a language the rules cannot judge:
 * interpreters, shells of other languages, editors and clients with shell escapes (`ed`'s `!`, sqlite3's
 * `.shell`, psql's `\!`), schedulers that take commands on stdin (`at`, `batch`, `crontab -`, `parallel`), and
 * ways into another shell (`su`, `ssh`, `docker exec -i`). With `stdin` given they are at least `approve` in shell
 * mode and refused in allowlist mode. Matched by basename; versioned names (`python3.11`) by their stem.
 */
const stdinCodeReaders = new Set([
  'python',
  'python2',
  'python3',
  'pypy',
  'pypy3',
  'node',
  'nodejs',
  'deno',
  'bun',
  'perl',
  'ruby',
  'irb',
  'php',
  'lua',
  'luajit',
  'tclsh',
  'wish',
  'expect',
  'r',
  'rscript',
  'julia',
  'ghci',
  'runghc',
  'guile',
  'sbcl',
  'clisp',
  'racket',
  'ocaml',
  'scala',
  'jshell',
  'groovy',
  'osascript',
  'pwsh',
  'powershell',
  'fish',
  'csh',
  'tcsh',
  'elvish',
  'nu',
  'xonsh',
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'sed',
  'gsed',
  'dc',
  'ed',
  'ex',
  'vi',
  'vim',
  'nvim',
  'emacs',
  'gdb',
  'lldb',
  'sqlite3',
  'psql',
  'mysql',
  'mariadb',
  'redis-cli',
  'mongo',
  'mongosh',
  'ftp',
  'lftp',
  'sftp',
  'ssh',
  'telnet',
  'su',
  'sudo',
  'doas',
  'runuser',
  'login',
  'chroot',
  'nsenter',
  'unshare',
  'machinectl',
  'docker',
  'podman',
  'kubectl',
  'lxc',
  'at',
  'batch',
  'crontab',
  'parallel',
  'make',
  'gmake',
  'm4',
  'script',
  'tmux',
  'screen',
]);

function programName(word: string | undefined): string {
  return ((word ?? '').split('/').pop() ?? '').toLowerCase();
}

/** `bash`, `/bin/sh`, … : a shell whose stdin is a script the rules can read. */
export function readsShellScriptFromStdin(word: string | undefined): boolean {
  return stdinShells.has(programName(word));
}

/** An interpreter or tool that runs code or commands from its stdin in a language the rules do not read. */
export function readsCodeFromStdin(word: string | undefined): boolean {
  const name = programName(word);
  return stdinCodeReaders.has(name) || stdinCodeReaders.has(name.replace(/[0-9.]+$/, ''));
}

/**
 * What a call's `stdin` adds to a judgement: for every command found in the line that reads a shell script from
 * its stdin, the verdicts of `judgeScript(stdin)` (the stdin judged as a command line of its own, reasons marked
 * "standard input"); for every command that reads other code from it, an `opaque` reason (`approve` in shell mode,
 * `deny` in allowlist mode, which runs only what it can see). Empty stdin adds nothing. Any command that may read
 * the call's stdin is counted (a pipeline's later stages read the pipe, not the call's stdin: counting them too
 * can only make the verdict stricter).
 */
export function judgeStdin(
  found: readonly Reason[],
  stdin: string | undefined,
  mode: 'shell' | 'allowlist',
  judgeScript: (script: string) => readonly Reason[],
): Reason[] {
  if (stdin === undefined || stdin.length === 0) return [];
  const added: Reason[] = [];
  const seen = new Set<string>();
  let scriptJudged = false;
  for (const reason of found) {
    const program = reason.command[0];
    const key = programName(program);
    if (seen.has(key)) continue;
    if (readsShellScriptFromStdin(program)) {
      seen.add(key);
      if (mode === 'allowlist') {
        added.push(opaqueStdin(reason.command, 'deny', `${key} would run its standard input as a script`));
      } else if (!scriptJudged) {
        scriptJudged = true;
        for (const r of judgeScript(stdin)) {
          added.push({ ...r, message: `standard input run by ${key}: ${r.message}`, source: 'stdin' });
        }
      }
    } else if (readsCodeFromStdin(program)) {
      seen.add(key);
      added.push(
        opaqueStdin(
          reason.command,
          mode === 'allowlist' ? 'deny' : 'approve',
          `${key} may run code or commands read from its standard input, which the rules cannot judge`,
        ),
      );
    }
  }
  return added;
}

function opaqueStdin(command: string[], verdict: 'approve' | 'deny', message: string): Reason {
  return { command: [...command], layer: 'opaque', verdict, message };
}
