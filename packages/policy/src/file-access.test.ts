import { isLetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { DEFAULT_SECRET_PATHS } from './builtins';
import { fileAccess, isDenied, layeredFileAccess } from './file-access';
import type { FileRule } from './file-rule';

const home = '/home/kite';

describe('fileAccess', () => {
  const files: FileRule[] = [
    { path: '*', access: 'ro' },
    { path: '/srv/app', access: 'rw' },
    { path: '/srv/app/config', access: 'ro' },
    { path: '~/work', access: 'rw' },
    { path: '/var/log/*.log', access: 'rw' },
    { path: '/data/**/public', access: 'rw' },
    { path: '/opt/?', access: 'rw' },
  ];
  const deny = ['/srv/app/secrets', '**/*.pem', '~/.ssh'];

  test.each([
    ['/etc/hosts', 'ro', '`*` covers everything'],
    ['/', 'ro', 'the root itself'],
    ['/srv/app', 'rw', 'an entry covers itself'],
    ['/srv/app/src/main.ts', 'rw', 'and everything beneath'],
    ['/srv/application', 'ro', 'a prefix of a name is not a parent'],
    ['/srv/app/config/db.toml', 'ro', 'the deeper entry decides'],
    ['/srv/app/secrets/token', 'none', 'deny beats a covering rw entry'],
    ['/srv/app/secrets', 'none', 'the denied path itself'],
    ['/srv/app/certs/server.pem', 'none', '`**/*.pem` at any depth'],
    ['/server.pem', 'none', '`**` matches zero segments'],
    ['/home/kite/work/x', 'rw', '`~` is the run-as home'],
    ['/home/kite/.ssh/id_ed25519', 'none', '`~/.ssh` is denied'],
    ['/home/other/.ssh/id_ed25519', 'ro', 'another home is not `~`'],
    ['/var/log/syslog.log', 'rw', '`*` inside a segment'],
    ['/var/log/.hidden.log', 'rw', '`*` matches dot-files'],
    ['/var/log/nested/x.log', 'ro', '`*` stays inside one segment'],
    ['/data/a/b/public/index.html', 'rw', '`**` spans segments'],
    ['/data/public', 'rw', '`**` spans zero segments'],
    ['/opt/x/bin', 'rw', '`?` is one character'],
    ['/opt/xy', 'ro', '`?` is not two'],
  ] as const)('%s → %s (%s)', (path, expected, _why) => {
    expect(fileAccess(path, { files, deny, home })).toBe(expected);
  });

  test('no covering entry gives no access', () => {
    expect(fileAccess('/etc/hosts', { files: [{ path: '/srv', access: 'rw' }], deny: [], home })).toBe('none');
    expect(fileAccess('/etc/hosts', { files: [], deny: [], home })).toBe('none');
  });

  test('a literal entry beats a glob matching at the same depth', () => {
    const rules: FileRule[] = [
      { path: '/srv/*', access: 'rw' },
      { path: '/srv/app', access: 'ro' },
    ];
    expect(fileAccess('/srv/app/x', { files: rules, deny: [], home })).toBe('ro');
    expect(fileAccess('/srv/web/x', { files: rules, deny: [], home })).toBe('rw');
  });

  test('a true tie between entries gives the stricter access', () => {
    const rules: FileRule[] = [
      { path: '/srv/a*', access: 'rw' },
      { path: '/srv/*b', access: 'ro' },
    ];
    expect(fileAccess('/srv/ab', { files: rules, deny: [], home })).toBe('ro');
  });

  test('ignoreCase compares paths and patterns case-insensitively', () => {
    const reach = { files: [{ path: '*', access: 'rw' as const }], deny: ['~/.SSH'], home: '/Users/Kite' };
    expect(fileAccess('/users/kite/.ssh/id_rsa', reach)).toBe('rw');
    expect(fileAccess('/users/kite/.ssh/id_rsa', { ...reach, ignoreCase: true })).toBe('none');
  });

  test.each(['relative/path', '', '/srv/../etc/shadow', '/srv/./x', '/a\0b'])(
    'an unresolved path %j is refused with invalid_params',
    (path) => {
      expect(() => fileAccess(path, { files, deny, home })).toThrowError(
        expect.objectContaining({ code: 'invalid_params' }),
      );
    },
  );

  test('a relative home is refused rather than making `~` match nothing', () => {
    try {
      fileAccess('/x', { files, deny, home: 'kite' });
      expect.unreachable();
    } catch (err) {
      expect(isLetKiteError(err, 'invalid_params')).toBe(true);
    }
  });
});

describe('isDenied and the secret list', () => {
  test.each([
    '/home/kite/.ssh/authorized_keys',
    '/home/bob/.ssh/id_rsa',
    '/root/.ssh/known_hosts',
    '/srv/app/.env',
    '/srv/app/.env.production',
    '/srv/app/tls/server.key',
    '/opt/backup/id_rsa.bak',
    '/home/kite/.aws/credentials',
    '/home/kite/.config/gcloud/credentials.db',
    '/home/kite/.azure/msal_token_cache.json',
    '/home/kite/.kube/config',
    '/home/kite/.docker/config.json',
    '/home/kite/.netrc',
    '/home/kite/.pgpass',
    '/etc/shadow',
    '/etc/gshadow',
    '/etc/sudoers',
    '/etc/sudoers.d/90-cloud-init-users',
    '/etc/ssh/ssh_host_ed25519_key',
  ])('%s is hidden', (path) => {
    expect(isDenied(path, { deny: DEFAULT_SECRET_PATHS, home })).toBe(true);
  });

  test.each([
    '/home/kite/.aws/config',
    '/home/kite/.kube/cache/x',
    '/etc/passwd',
    '/etc/ssh/ssh_host_ed25519_key.pub',
    '/srv/app/.envrc',
    '/srv/app/src/index.ts',
  ])('%s is not hidden', (path) => {
    expect(isDenied(path, { deny: DEFAULT_SECRET_PATHS, home })).toBe(false);
  });
});

describe('layeredFileAccess', () => {
  const policy: FileRule[] = [{ path: '*', access: 'rw' }];
  const ceiling: FileRule[] = [
    { path: '/srv', access: 'rw' },
    { path: '*', access: 'ro' },
  ];

  test.each([
    ['/srv/x', 'rw'],
    ['/etc/hosts', 'ro'],
  ] as const)('%s → %s: the least any layer gives', (path, expected) => {
    expect(layeredFileAccess(path, { layers: [policy, ceiling], deny: [], home })).toBe(expected);
  });

  test('a layer without a covering entry gives none', () => {
    expect(
      layeredFileAccess('/etc/hosts', { layers: [policy, [{ path: '/srv', access: 'rw' }]], deny: [], home }),
    ).toBe('none');
  });

  test('no layers at all fails closed', () => {
    expect(layeredFileAccess('/srv/x', { layers: [], deny: [], home })).toBe('none');
  });

  test('deny applies across layers', () => {
    expect(layeredFileAccess('/srv/x', { layers: [policy, ceiling], deny: ['/srv/x'], home })).toBe('none');
  });
});
