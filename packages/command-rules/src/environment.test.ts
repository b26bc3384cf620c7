import { beforeAll, describe, expect, test } from 'vitest';
import { isLoaderVariable, isSensitiveVariable, judgeEnvironment } from './environment';
import { evaluateCommand } from './evaluate';
import { CommandPolicy, type Verdict } from './policy-schema';
import { loadCommandRules } from './shell-parser';

beforeAll(async () => {
  await loadCommandRules();
});

type Kind = 'loader' | 'sensitive' | 'harmless';

function kindOf(name: string): Kind {
  if (isLoaderVariable(name)) return 'loader';
  return isSensitiveVariable(name) ? 'sensitive' : 'harmless';
}

describe('which variables matter', () => {
  test.each<[string, Kind]>([
    // the dynamic loader and libc
    ['LD_PRELOAD', 'loader'],
    ['LD_LIBRARY_PATH', 'loader'],
    ['LD_AUDIT', 'loader'],
    ['ld_preload', 'loader'],
    ['DYLD_INSERT_LIBRARIES', 'loader'],
    ['GCONV_PATH', 'loader'],
    ['GLIBC_TUNABLES', 'loader'],
    ['MALLOC_TRACE', 'loader'],
    ['MALLOC_CHECK_', 'loader'],
    ['LOCPATH', 'loader'],
    ['NLSPATH', 'loader'],
    ['HOSTALIASES', 'loader'],
    ['RES_OPTIONS', 'loader'],
    ['TZDIR', 'loader'],
    ['COR_PROFILER_PATH', 'loader'],
    ['CORECLR_ENABLE_PROFILING', 'loader'],
    // what runs and what it reads
    ['PATH', 'sensitive'],
    ['Path', 'sensitive'],
    ['HOME', 'sensitive'],
    ['XDG_CONFIG_HOME', 'sensitive'],
    ['XDG_DATA_DIRS', 'sensitive'],
    ['GIT_CONFIG_COUNT', 'sensitive'],
    ['GIT_CONFIG_KEY_0', 'sensitive'],
    ['GIT_CONFIG_VALUE_0', 'sensitive'],
    ['GIT_CONFIG_PARAMETERS', 'sensitive'],
    ['GIT_DIR', 'sensitive'],
    ['GIT_WORK_TREE', 'sensitive'],
    ['GIT_EXEC_PATH', 'sensitive'],
    ['GIT_SSH_COMMAND', 'sensitive'],
    ['GIT_EXTERNAL_DIFF', 'sensitive'],
    ['GIT_TRACE', 'sensitive'],
    ['BASH_ENV', 'sensitive'],
    ['BASH_FUNC_ls%%', 'sensitive'],
    ['ENV', 'sensitive'],
    ['ZDOTDIR', 'sensitive'],
    ['SHELLOPTS', 'sensitive'],
    ['BASHOPTS', 'sensitive'],
    ['IFS', 'sensitive'],
    ['CDPATH', 'sensitive'],
    ['GLOBIGNORE', 'sensitive'],
    ['EXECIGNORE', 'sensitive'],
    ['PS1', 'sensitive'],
    ['PS4', 'sensitive'],
    ['PROMPT_COMMAND', 'sensitive'],
    ['HISTFILE', 'sensitive'],
    ['INPUTRC', 'sensitive'],
    ['TMPDIR', 'sensitive'],
    ['SHELL', 'sensitive'],
    ['PYTHONPATH', 'sensitive'],
    ['PYTHONSTARTUP', 'sensitive'],
    ['PYTHONHOME', 'sensitive'],
    ['PYTHONBREAKPOINT', 'sensitive'],
    ['PYTHONWARNINGS', 'sensitive'],
    ['NODE_OPTIONS', 'sensitive'],
    ['NODE_PATH', 'sensitive'],
    ['npm_config_script_shell', 'sensitive'],
    ['PERL5OPT', 'sensitive'],
    ['PERL5LIB', 'sensitive'],
    ['PERL5DB', 'sensitive'],
    ['PERLLIB', 'sensitive'],
    ['RUBYOPT', 'sensitive'],
    ['RUBYLIB', 'sensitive'],
    ['JAVA_TOOL_OPTIONS', 'sensitive'],
    ['_JAVA_OPTIONS', 'sensitive'],
    ['CLASSPATH', 'sensitive'],
    ['LUA_INIT', 'sensitive'],
    ['PHPRC', 'sensitive'],
    ['DOTNET_STARTUP_HOOKS', 'sensitive'],
    ['GOFLAGS', 'sensitive'],
    ['GOTOOLCHAIN', 'sensitive'],
    ['RUSTC_WRAPPER', 'sensitive'],
    ['CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER', 'sensitive'],
    ['CC', 'sensitive'],
    ['MAKEFLAGS', 'sensitive'],
    ['MAKEFILES', 'sensitive'],
    ['EDITOR', 'sensitive'],
    ['VISUAL', 'sensitive'],
    ['PAGER', 'sensitive'],
    ['MANPAGER', 'sensitive'],
    ['LESSOPEN', 'sensitive'],
    ['LESS', 'sensitive'],
    ['VIMINIT', 'sensitive'],
    ['EXINIT', 'sensitive'],
    ['SSH_ASKPASS', 'sensitive'],
    ['SSH_AUTH_SOCK', 'sensitive'],
    ['SUDO_ASKPASS', 'sensitive'],
    ['DBUS_SESSION_BUS_ADDRESS', 'sensitive'],
    ['OPENSSL_CONF', 'sensitive'],
    ['KUBECONFIG', 'sensitive'],
    ['DOCKER_HOST', 'sensitive'],
    ['AWS_CONFIG_FILE', 'sensitive'],
    ['CURL_HOME', 'sensitive'],
    ['WGETRC', 'sensitive'],
    ['TERMINFO', 'sensitive'],
    ['PATHEXT', 'sensitive'],
    ['COMSPEC', 'sensitive'],
    ['PSModulePath', 'sensitive'],
    ['a-b', 'sensitive'],
    // cosmetics, identity, data
    ['LANG', 'harmless'],
    ['LC_ALL', 'harmless'],
    ['TERM', 'harmless'],
    ['TZ', 'harmless'],
    ['CI', 'harmless'],
    ['DEBUG', 'harmless'],
    ['NO_COLOR', 'harmless'],
    ['FORCE_COLOR', 'harmless'],
    ['COLUMNS', 'harmless'],
    ['DEBIAN_FRONTEND', 'harmless'],
    ['GITHUB_TOKEN', 'harmless'],
    ['DATABASE_URL', 'harmless'],
    ['HTTPS_PROXY', 'harmless'],
    ['RUST_LOG', 'harmless'],
    ['RUST_BACKTRACE', 'harmless'],
    ['NODE_ENV', 'harmless'],
    ['GOOS', 'harmless'],
    ['GOMAXPROCS', 'harmless'],
    ['CGO_ENABLED', 'harmless'],
    ['GOPROXY', 'sensitive'],
    ['PYTHONUNBUFFERED', 'harmless'],
    ['PYTHONDONTWRITEBYTECODE', 'harmless'],
    ['GIT_AUTHOR_NAME', 'harmless'],
    ['GIT_COMMITTER_EMAIL', 'harmless'],
    ['GIT_TERMINAL_PROMPT', 'harmless'],
    ['MY_APP_SETTING', 'harmless'],
  ])('%s is %s', (name, kind) => {
    expect(kindOf(name)).toBe(kind);
  });

  test('every loader variable is also sensitive', () => {
    for (const name of ['LD_PRELOAD', 'GCONV_PATH', 'GLIBC_TUNABLES', 'MALLOC_ARENA_MAX', 'DYLD_LIBRARY_PATH']) {
      expect(isSensitiveVariable(name), name).toBe(true);
    }
  });
});

describe('judgeEnvironment', () => {
  test('one reason per variable that matters, none for the others, values never shown', () => {
    const reasons = judgeEnvironment({ LANG: 'C', LD_PRELOAD: '/tmp/evil.so', PATH: '/tmp/secret-token-xyz' });
    expect(reasons.map((r) => [r.rule, r.layer, r.verdict])).toEqual([
      ['LD_PRELOAD', 'environment', 'deny'],
      ['PATH', 'environment', 'approve'],
    ]);
    expect(JSON.stringify(reasons)).not.toContain('secret-token-xyz');
    expect(JSON.stringify(reasons)).not.toContain('evil.so');
  });

  test.each<[Record<string, string>, Verdict]>([
    [{ '': 'x' }, 'deny'],
    [{ 'A=B': 'x' }, 'deny'],
    [{ 'A\0B': 'x' }, 'deny'],
    [{ A: 'x\0y' }, 'deny'],
  ])('a malformed entry %j is %s', (env, verdict) => {
    expect(judgeEnvironment(env).map((r) => r.verdict)).toEqual([verdict]);
  });

  test('an empty environment gives no reasons', () => {
    expect(judgeEnvironment({})).toEqual([]);
  });
});

describe('evaluateCommand with env', () => {
  const shell = CommandPolicy.parse({
    default: 'approve',
    rules: [
      { match: 'ls *', verdict: 'allow' },
      { match: 'git status', verdict: 'allow' },
    ],
  });
  const allowlist = CommandPolicy.parse({ mode: 'allowlist', allow: ['ls *', 'git status'] });

  test.each<[string, CommandPolicy, string | string[], Record<string, string>, Verdict]>([
    ['shell: harmless env keeps allow', shell, 'ls -la', { LANG: 'C', TERM: 'xterm' }, 'allow'],
    ['shell: PATH needs a human', shell, 'ls', { PATH: '/tmp/evil' }, 'approve'],
    ['shell: GIT_CONFIG_* needs a human', shell, 'git status', { GIT_CONFIG_COUNT: '1' }, 'approve'],
    ['shell: LD_PRELOAD is denied', shell, 'ls', { LD_PRELOAD: '/tmp/x.so' }, 'deny'],
    ['shell argv: BASH_ENV needs a human', shell, ['ls'], { BASH_ENV: '/tmp/x' }, 'approve'],
    ['allowlist: harmless env keeps allow', allowlist, 'ls -la', { LANG: 'C' }, 'allow'],
    ['allowlist: PATH is refused', allowlist, 'ls', { PATH: '/tmp/evil' }, 'deny'],
    ['allowlist: GIT_CONFIG_* is refused', allowlist, ['git', 'status'], { GIT_CONFIG_COUNT: '1' }, 'deny'],
    ['allowlist: LD_PRELOAD is refused', allowlist, 'ls', { LD_PRELOAD: '/tmp/x.so' }, 'deny'],
  ])('%s', (_name, policy, command, env, verdict) => {
    expect(evaluateCommand(command, policy, { env }).verdict).toBe(verdict);
  });

  test('a sensitive variable is never lifted by confirm', () => {
    expect(evaluateCommand('ls', shell, { env: { HOME: '/tmp/h' }, confirm: true }).verdict).toBe('approve');
  });

  test('allowlist refusals of the environment name the allowlist layer', () => {
    const { reasons } = evaluateCommand('ls', allowlist, { env: { PATH: '/tmp/evil' } });
    expect(reasons.find((r) => r.verdict === 'deny')?.layer).toBe('allowlist');
  });
});
