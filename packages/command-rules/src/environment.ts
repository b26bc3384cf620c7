import type { Reason } from './types';

/**
 * Which environment variables matter to the command rules (DESIGN §4, issues #10 and #11). One list decides both
 * an inline assignment (`VAR=x cmd`, `export`, `declare`, …) and the `env` argument of exec, jobs, shell sessions
 * and terminals, so the two can never disagree. Names are compared upper-cased: Windows names are
 * case-insensitive, and tools such as npm read lower-case spellings (`npm_config_*`) too.
 *
 * - **Loader variables** are read by the dynamic loader or the C library in every process before the program's
 *   own code runs (glibc's `UNSECURE_ENVVARS`, the ones it strips for setuid programs, minus `TMPDIR`; `LD_*`,
 *   `DYLD_*`, `MALLOC*`, the .NET profiler hooks). They load code no rule can see: always `deny`.
 * - **Sensitive variables** change which program runs, what code it loads, or which configuration, start-up or
 *   history file it reads or writes (`PATH`, `HOME`, `XDG_*`, `GIT_*`, `BASH_ENV`, `ENV`, `PYTHON*`,
 *   `NODE_OPTIONS`, `PERL5*`, `RUBY*`, `IFS`, `CDPATH`, `PS4`, `PROMPT_COMMAND`, `SHELLOPTS`, …): never `allow`,
 *   at least `approve`. Loader variables are sensitive too.
 * Anything else (`LANG`, `TERM`, `TZ`, `CI`, tokens, proxies, an application's own settings) does not matter.
 */

/** Read by ld.so / libc before `main` (glibc sysdeps/generic/unsecvars.h, minus TMPDIR), plus other loaders. */
const loaderNames = new Set([
  'GCONV_PATH',
  'GETCONF_DIR',
  'GLIBC_TUNABLES',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'LOCPATH',
  'NIS_PATH',
  'NLSPATH',
  'RESOLV_HOST_CONF',
  'RES_OPTIONS',
  'TZDIR',
  'LIBPATH',
  'SHLIB_PATH',
]);
const loaderPattern = /^(LD_|DYLD_|MALLOC|_RLD|LIBC_FATAL_STDERR|(COR|CORECLR)_(ENABLE_PROFILING|PROFILER))/;

/** Exact names that choose programs, start-up code or configuration. */
const sensitiveNames = new Set([
  // shells: start-up files, word splitting, prompts that expand `$(…)`, tracing, function import, lookups
  'ENV',
  'IFS',
  'CDPATH',
  'GLOBIGNORE',
  'EXECIGNORE',
  'FIGNORE',
  'SHELLOPTS',
  'BASHOPTS',
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'ZDOTDIR',
  'INPUTRC',
  'POSIXLY_CORRECT',
  'TMOUT',
  'SHELL',
  'VISUAL',
  'FCEDIT',
  'TMPDIR',
  'TMP',
  'TEMP',
  // build tools: the compiler, the linker and make's own makefiles are programs chosen by name
  'CC',
  'CXX',
  'CPP',
  'LD',
  'AR',
  'AS',
  'FC',
  'NM',
  'RANLIB',
  'STRIP',
  'OBJCOPY',
  'OBJDUMP',
  'MAKE',
  'MAKEFILES',
  'MFLAGS',
  'YACC',
  'LEX',
  'RUSTC',
  'RUSTDOC',
  'CLASSPATH',
  'PHPRC',
  'PHP_INI_SCAN_DIR',
  'TCLLIBPATH',
  'EXINIT',
  'VIMINIT',
  'MYVIMRC',
  'VIMRUNTIME',
  'TERMINFO',
  'TERMINFO_DIRS',
  'TERMCAP',
  'XAUTHORITY',
  'ICEAUTHORITY',
  'KUBECONFIG',
  'AWS_SHARED_CREDENTIALS_FILE',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'CURL_CA_BUNDLE',
  'REQUESTS_CA_BUNDLE',
  // Windows: program lookup, the command interpreter, the profile and system directories DLLs come from
  'PATHEXT',
  'COMSPEC',
  'APPDATA',
  'LOCALAPPDATA',
  'USERPROFILE',
  'HOMEDRIVE',
  'SYSTEMROOT',
  'WINDIR',
  'PROGRAMDATA',
]);

/**
 * Families. Prefixes name a tool whose behaviour the variables configure; suffixes are the conventions for "a
 * search path", "a home or config location", "extra options" and "a program to run".
 */
const sensitivePattern = new RegExp(
  [
    // prefixes
    '^(GIT_|BASH|ZSH|KSH|HIST|PROMPT_|XDG_|PYTHON|NODE_|NPM_CONFIG_|YARN_|PNPM_|COREPACK_|BUN_|DENO_|PERL|RUBY|',
    'GEM_|BUNDLE_|PIP_|UV_|CONDA|VIRTUAL_ENV|CARGO_|RUSTUP_|GO[A-Z]|JAVA|_JAVA_|JDK_|MAVEN_|GRADLE_|SBT_|',
    'DOTNET_|COMPLUS_|NUGET_|LUA_|R_|EMACS|VIM|LESS|MAN|SSH_|SUDO_|DBUS_|SYSTEMD_|GNUPG|GPG_|KRB5|DOCKER_|',
    'PODMAN_|CONTAINERS_|KUBE|HELM_|CLOUDSDK_|AZURE_|BOTO_|OPENSSL_|SSL_CERT_|CURL_|WGET|QT_|GTK_|GIO_|GST_|',
    'GDK_|LIBGL_|MESA_|VK_|PKG_CONFIG|ANSIBLE_|TERRAFORM_|TF_CLI_|NIX_)',
    // suffixes
    '|(PATH|HOME|RC|_DIRS|OPTS?|OPTIONS|FLAGS|EDITOR|PAGER|ASKPASS|BROWSER|SHELL|TERMINAL)$',
    // anywhere, as a whole word of the name
    '|(^|_)(CONF|CONFIG|COMMAND|CMD|PROGRAM|WRAPPER|EXEC|EXECUTABLE|RUNNER|HOOKS?|PLUGINS?|PRELOAD|INIT|STARTUP|',
    'PROFILER?|ENGINES?|MODULES?|LOADER|INTERPRETER|INCLUDE|LIB)(_|$)',
  ].join(''),
);

/** Members of the families above that only change cosmetics, identity or safety in the safe direction. */
const harmlessNames = new Set([
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'GIT_TERMINAL_PROMPT',
  'GIT_OPTIONAL_LOCKS',
  'GIT_MERGE_VERBOSITY',
  'GIT_FLUSH',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONIOENCODING',
  'PYTHONUTF8',
  'PYTHONHASHSEED',
  'PYTHONFAULTHANDLER',
  'PYTHONNOUSERSITE',
  'PYTHONSAFEPATH',
  'GOOS',
  'GOARCH',
  'GOAMD64',
  'GOARM',
  'GOMAXPROCS',
  'GOGC',
  'GOMEMLIMIT',
  'NODE_ENV',
  'NODE_NO_WARNINGS',
  'NODE_DISABLE_COLORS',
  'LESSCHARSET',
  'MANWIDTH',
  'HISTSIZE',
  'HISTCONTROL',
  'HISTTIMEFORMAT',
  'HISTIGNORE',
]);

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Read by the dynamic loader or libc before the program runs: always `deny`, wherever it is set. */
export function isLoaderVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return loaderNames.has(upper) || loaderPattern.test(upper);
}

/**
 * Changes which program runs, what code it loads or which configuration it reads: never `allow` (at least
 * `approve`; allowlist mode refuses it). Every loader variable is sensitive, and so is a name that is not a shell
 * identifier (`BASH_FUNC_ls%%` carries an exported function).
 */
export function isSensitiveVariable(name: string): boolean {
  if (!identifier.test(name)) return true;
  const upper = name.toUpperCase();
  if (harmlessNames.has(upper)) return false;
  return isLoaderVariable(upper) || sensitiveNames.has(upper) || sensitivePattern.test(upper);
}

/**
 * Judges an `env` argument as if each entry were written `NAME=value` before the command: one `environment`
 * reason per variable that matters (loader → `deny`, sensitive → `approve`), none for the others. A name that
 * cannot be an environment entry at all (empty, `=` or NUL in it) and a value with a NUL are `deny`. Values are
 * never quoted in a reason: they may hold secrets.
 */
export function judgeEnvironment(env: Readonly<Record<string, string>>): Reason[] {
  const reasons: Reason[] = [];
  for (const [name, value] of Object.entries(env)) {
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    if (name === '' || name.includes('=') || name.includes('\0') || typeof value !== 'string' || value.includes('\0')) {
      reasons.push({
        command: [],
        layer: 'environment',
        rule: shown,
        verdict: 'deny',
        message: `the environment entry ${JSON.stringify(shown)} is malformed`,
      });
    } else if (isLoaderVariable(name)) {
      reasons.push({
        command: [],
        layer: 'environment',
        rule: shown,
        verdict: 'deny',
        message: `setting ${shown} loads code before any program runs`,
      });
    } else if (isSensitiveVariable(name)) {
      reasons.push({
        command: [],
        layer: 'environment',
        rule: shown,
        verdict: 'approve',
        message: `setting ${shown} changes which program or code runs or what it reads`,
      });
    }
  }
  return reasons;
}
