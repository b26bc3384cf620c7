import { isLetKiteError } from '@letkite/protocol';
import { describe, expect, test } from 'vitest';
import { fakePrivateKey, fakeTokens, filler, fold } from './fake-secrets.fixture';
import { maskSecrets } from './mask';
import { compileRedactionPatterns, MAX_REDACTION_PATTERN_LENGTH } from './redaction-patterns';

const tokens = fakeTokens();
const b64 = (n: number, seed = 0) =>
  filler(n, seed, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');

describe('each known token format is masked and its surroundings kept', () => {
  test.each(Object.entries(tokens))('%s', (_name, token) => {
    const text = `export VALUE=${token} # from the vault\n`;
    expect(maskSecrets(text)).toEqual({ text: 'export VALUE=*** # from the vault\n', masked_count: 1 });
  });

  test.each(Object.entries(tokens))('%s inside JSON and at the start of a line', (_name, token) => {
    expect(maskSecrets(`{"value":"${token}"}`).text).toBe('{"value":"***"}');
    expect(maskSecrets(`${token}\n$ next line`).text).toBe('***\n$ next line');
    expect(maskSecrets(`${token}\nNEXT_KEY=value`).text).toBe('***\nNEXT_KEY=value');
  });
});

describe('secrets recognised by their context are masked, keeping the key name', () => {
  const secret40 = `${b64(20)}/${b64(19, 5)}`;
  const accountKey = `${b64(86, 3)}==`;
  const cases: [string, string, string][] = [
    ['aws secret in a credentials file', `aws_secret_access_key = ${secret40}`, 'aws_secret_access_key = ***'],
    ['aws secret in the environment', `AWS_SECRET_ACCESS_KEY=${secret40}`, 'AWS_SECRET_ACCESS_KEY=***'],
    ['aws secret in sts JSON', `"SecretAccessKey": "${secret40}",`, '"SecretAccessKey": "***",'],
    [
      'azure storage connection string',
      `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${accountKey};EndpointSuffix=core.windows.net`,
      'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net',
    ],
    [
      'service bus connection string',
      `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=${b64(44, 2)}`,
      'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=***',
    ],
    [
      'sql server connection string',
      'Server=db;User Id=sa;Password=Tr0ub4dor&3x;',
      'Server=db;User Id=sa;Password=***&3x;',
    ],
    ['odbc connection string', 'Driver={ODBC};Uid=app;Pwd=Tr0ub4dor3;', 'Driver={ODBC};Uid=app;Pwd=***;'],
    [
      'url with user and password',
      'postgres://app:S3cr3tPw@db.internal:5432/app',
      'postgres://app:***@db.internal:5432/app',
    ],
    [
      'git remote with a token as password',
      `https://x-access-token:${filler(30)}@github.com/org/repo.git`,
      'https://x-access-token:***@github.com/org/repo.git',
    ],
    [
      'slack incoming webhook',
      `curl -X POST https://hooks.slack.com/services/T0000/B0000/${filler(24)}`,
      'curl -X POST https://hooks.slack.com/services/***',
    ],
    [
      'azure SAS signature',
      `https://acct.blob.core.windows.net/c/f?sv=2022&sig=${b64(43, 1)}%3D&se=2030`,
      'https://acct.blob.core.windows.net/c/f?sv=2022&sig=***&se=2030',
    ],
    ['password= assignment', 'PASSWORD=hunter2 ./run.sh', 'PASSWORD=*** ./run.sh'],
    ['passwd: assignment', 'passwd: hunter2', 'passwd: ***'],
    ['secret= assignment', 'client_secret=abc123def', 'client_secret=***'],
    ['token= in a query string', 'GET /cb?token=abc123&state=xyz', 'GET /cb?token=***&state=xyz'],
    ['api_key: assignment', 'api_key: abc123def456', 'api_key: ***'],
    ['rails secret key base', 'SECRET_KEY_BASE=abc123', 'SECRET_KEY_BASE=***'],
    ['quoted value with spaces', 'password = "correct horse battery"', 'password = "***"'],
    ['JSON value with escaped quote', '{"password":"a\\"b c"}', '{"password":"***"}'],
    ['single-quoted value', "db_password: 'x y z'", "db_password: '***'"],
    ['ruby hash arrow', "'api_key' => 'abc123'", "'api_key' => '***'"],
    ['command line flag with a space', 'mysql --password hunter2 -h db', 'mysql --password *** -h db'],
    ['command line flag with equals', 'tool --token=abc123 run', 'tool --token=*** run'],
    ['authorization bearer header', 'Authorization: Bearer abcdefghijklmnop1234', 'Authorization: Bearer ***'],
    ['authorization basic header', '> authorization: Basic dXNlcjpwYXNzd29yZA==', '> authorization: Basic ***'],
    ['bearer in a curl command', `curl -H "Bearer ${filler(32)}" https://api`, 'curl -H "Bearer ***" https://api'],
  ];
  test.each(cases)('%s', (_name, text, expected) => {
    expect(maskSecrets(text)).toEqual({ text: expected, masked_count: 1 });
  });
});

describe('private key blocks are masked whole', () => {
  test.each([
    'RSA PRIVATE KEY',
    'EC PRIVATE KEY',
    'DSA PRIVATE KEY',
    'OPENSSH PRIVATE KEY',
    'PRIVATE KEY',
    'ENCRYPTED PRIVATE KEY',
    'PGP PRIVATE KEY BLOCK',
  ])('%s', (label) => {
    const text = `$ cat key\n${fakePrivateKey(label)}\n$ echo done`;
    expect(maskSecrets(text)).toEqual({ text: '$ cat key\n***\n$ echo done', masked_count: 1 });
  });

  test('a legacy encrypted key with Proc-Type and DEK-Info headers', () => {
    const key = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'Proc-Type: 4,ENCRYPTED',
      'DEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF',
      '',
      b64(64),
      b64(20, 1),
      '-----END RSA PRIVATE KEY-----',
    ].join('\r\n');
    expect(maskSecrets(`a\r\n${key}\r\nb`).text).toBe('a\r\n***\r\nb');
  });

  test('an indented key in YAML keeps the key name', () => {
    const key = fakePrivateKey('OPENSSH PRIVATE KEY').replace(/^/gm, '  ');
    expect(maskSecrets(`ssh_key: |\n${key}\nhost: x`).text).toBe('ssh_key: |\n  ***\nhost: x');
  });

  test('a key inside a JSON string with escaped newlines (a cloud service account)', () => {
    const key = fakePrivateKey('PRIVATE KEY').replace(/\n/g, '\\n');
    expect(maskSecrets(`{"type":"service_account","private_key":"${key}\\n","client_email":"a@b"}`).text).toBe(
      '{"type":"service_account","private_key":"***","client_email":"a@b"}',
    );
  });

  test('a block cut off after its BEGIN line masks the key lines that follow', () => {
    const head = fakePrivateKey().split('\n').slice(0, 4).join('\n');
    expect(maskSecrets(`before\n${head}`).text).toBe('before\n***');
    expect(maskSecrets(`before\n${head}\n\n$ ls -la\ntotal 0`).text).toBe('before\n***\n\n$ ls -la\ntotal 0');
  });

  test('a block whose BEGIN line was cut off masks the key lines before its END', () => {
    const tail = fakePrivateKey().split('\n').slice(3).join('\n');
    expect(maskSecrets(`$ tail -4 key\n${tail}\n$`).text).toBe('$ tail -4 key\n***\n$');
  });

  test('certificates and public keys survive', () => {
    const cert = fakePrivateKey('CERTIFICATE');
    const pub = `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${b64(43)} me@host`;
    expect(maskSecrets(`${cert}\n${pub}`)).toEqual({ text: `${cert}\n${pub}`, masked_count: 0 });
  });
});

describe('a secret wrapped across line breaks is still masked', () => {
  /** The folded line with the secret's characters replaced: `***` where it starts, its line breaks kept. */
  function expectedFolded(before: string, secret: string, after: string, width: number): string {
    const marked = fold(`${before}${'\u0000'.repeat(secret.length)}${after}`, width);
    return marked.replace(/\u0000[\u0000\n]*\u0000|\u0000/, (run) => `***${run.replace(/\u0000/g, '')}`);
  }

  test.each(Object.entries(tokens))('%s wrapped at 80 and at arbitrary columns', (_name, token) => {
    for (const width of [80, 7, 11, 16, 23, 37, 50]) {
      const before = 'export VALUE=';
      const after = ' # from the vault';
      const folded = fold(`${before}${token}${after}`, width);
      if (!folded.slice(before.length).includes('\n')) continue;
      expect(maskSecrets(folded).text, `width ${width}`).toBe(expectedFolded(before, token, after, width));
    }
  });

  test('a wrapped token on a terminal with CRLF line ends', () => {
    const token = tokens['github-fine-grained-token']!;
    const text = `$ echo $T\r\n${token.slice(0, 50)}\r\n${token.slice(50)}\r\n$ `;
    expect(maskSecrets(text)).toEqual({ text: '$ echo $T\r\n***\r\n\r\n$ ', masked_count: 1 });
  });

  test('a wrapped key whose last line starts with its own padding is still masked whole', () => {
    const key = `${b64(86, 3)}==`;
    const text = `AccountName=a;AccountKey=${key.slice(0, 60)}\n${key.slice(60)};EndpointSuffix=x`;
    expect(maskSecrets(text).text).toBe('AccountName=a;AccountKey=***\n;EndpointSuffix=x');
  });

  test('a wrapped url password and a wrapped bearer header', () => {
    const url = fold(`remote: https://deploy:${filler(40)}@git.example.com/x.git done`, 30);
    expect(maskSecrets(url).text.replace(/\n/g, '')).toBe('remote: https://deploy:***@git.example.com/x.git done');
    const header = fold(`> Authorization: Bearer ${filler(120)}\n> Accept: */*`, 64);
    expect(maskSecrets(header).text).toBe('> Authorization: Bearer ***\n\n\n> Accept: */*');
  });

  test('a variable-length token ending a line may also mask the first word of the next line (fail closed)', () => {
    // Nothing tells a finished token from one the terminal wrapped; only a following `key=` or `key:` does.
    const key = tokens['openai-project-key']!;
    expect(maskSecrets(`${key}\nnext line`).text).toBe('***\n line');
    expect(maskSecrets(`OPENAI_API_KEY=${key}\nPATH=/usr/bin\nAccept: */*`).text).toBe(
      'OPENAI_API_KEY=***\nPATH=/usr/bin\nAccept: */*',
    );
  });

  test('a private key block split at any position is masked whole', () => {
    const key = fakePrivateKey('OPENSSH PRIVATE KEY', 3);
    for (let at = 1; at < key.length; at++) {
      const split = `${key.slice(0, at)}\n${key.slice(at)}`;
      const out = maskSecrets(`before\n${split}\nafter`);
      expect(out, `split at ${at}`).toEqual({ text: 'before\n***\nafter', masked_count: 1 });
    }
  });

  test('a private key block folded at 40 columns is masked whole', () => {
    expect(maskSecrets(`x\n${fold(fakePrivateKey('EC PRIVATE KEY'), 40)}\ny`).text).toBe('x\n***\ny');
  });
});

test('several secrets in one text are each masked and counted', () => {
  const text = [
    `GITHUB_TOKEN=${tokens['github-token']}`,
    `AWS_ACCESS_KEY_ID=${tokens['aws-access-key-id']}`,
    'DATABASE_URL=postgres://app:pw123456@db/app',
    fakePrivateKey(),
    `curl -H "Authorization: Bearer ${tokens.jwt}" https://api`,
    'PASSWORD=hunter2',
    `token: ${tokens['slack-bot-token']}`,
  ].join('\n');
  expect(maskSecrets(text)).toEqual({
    text: [
      'GITHUB_TOKEN=***',
      'AWS_ACCESS_KEY_ID=***',
      'DATABASE_URL=postgres://app:***@db/app',
      '***',
      'curl -H "Authorization: Bearer ***" https://api',
      'PASSWORD=***',
      'token: ***',
    ].join('\n'),
    masked_count: 7,
  });
});

describe('ordinary output that looks a little like a secret survives', () => {
  const uuid = '3f2504e0-4f89-11d3-9a0c-0305e82c3301';
  const cases: [string, string][] = [
    ['git SHAs', 'commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nMerge: 1a2b3c4 5d6e7f8\nabc1234 fix the build'],
    ['git SHAs on consecutive lines', `${'9fceb02d0ae598e95dc970b74767f19372d61af8\n'.repeat(3)}`],
    ['UUIDs', `request ${uuid} done\n${uuid}\n${uuid.toUpperCase()}`],
    [
      'sha256sum output',
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt\n' +
        '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  test.txt',
    ],
    ['base64 of ordinary data', 'aGVsbG8gd29ybGQsIHRoaXMgaXMgYW4gb3JkaW5hcnkgc2VudGVuY2Ugb2YgdGV4dA=='],
    ['base64 wrapped at 76 columns', fold(b64(76 * 6), 76)],
    [
      'ls -la output',
      'total 48\ndrwxr-xr-x  5 deploy deploy 4096 May  3 12:01 .\n-rw-------  1 deploy deploy  411 May  3 12:01 .env\n' +
        '-rw-r--r--  1 deploy deploy 1.2K May  3 12:01 secrets.yaml\nlrwxrwxrwx  1 root root 7 Jan 1 bin -> usr/bin',
    ],
    [
      'package-lock integrity strings',
      `"node_modules/zod": {\n  "version": "4.6.7",\n  "resolved": "https://registry.npmjs.org/zod/-/zod-4.6.7.tgz",\n  "integrity": "sha512-${b64(86, 9)}=="\n}`,
    ],
    [
      'the word password in prose',
      'Enter your password to continue. The password is required.\n[sudo] password for bob:',
    ],
    ['a password prompt with nothing typed', 'Password: \nlogin failed'],
    ['the shell PWD and OLDPWD', 'PWD=/home/bob/src\nOLDPWD=/home/bob'],
    ['token counts', 'input_tokens: 1200\nmax_tokens=4096\ntoken_count: 3'],
    ['kubernetes secret references', 'secretKeyRef:\n  name: db\n  key: password\nsecrets: 2'],
    [
      'variable references instead of values',
      `password: \${DB_PASSWORD}\ntoken=$GITHUB_TOKEN\npassword: \${{ secrets.PW }}`,
    ],
    ['words that contain sk-', 'task-management-system-overview-document and risk-assessment-quarterly-report-2024'],
    ['a url without a password', 'https://user@example.com/path and http://[::1]:8080/x and git@github.com:org/repo'],
    ['an already masked text', 'password=*** token: *** Authorization: Bearer *** postgres://a:***@db'],
    ['a docker image digest', 'image@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ];
  test.each(cases)('%s', (_name, text) => {
    expect(maskSecrets(text)).toEqual({ text, masked_count: 0 });
  });
});

describe('account redaction patterns', () => {
  test('valid patterns are compiled with the global flag and masked, also when wrapped', () => {
    const patterns = compileRedactionPatterns(['corp-[a-z0-9]{24}', 'INTERNAL-\\d{6}']);
    expect(patterns.every((p) => p.global)).toBe(true);
    const id = `corp-${filler(24, 0, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
    const text = `id ${id} ticket INTERNAL-123456\nwrapped ${id.slice(0, 10)}\n${id.slice(10)} end`;
    expect(maskSecrets(text, { extraPatterns: patterns })).toEqual({
      text: 'id *** ticket ***\nwrapped ***\n end',
      masked_count: 3,
    });
  });

  test('a pattern given without the global flag still masks every occurrence', () => {
    expect(maskSecrets('x-1 x-2', { extraPatterns: [/x-\d/] }).text).toBe('*** ***');
  });

  test.each([
    ['does not compile', '(unclosed'],
    ['matches the empty string', 'a*'],
    ['matches the empty string at a boundary', '\\b'],
    ['is a bare alternation with an empty side', 'secret|'],
    ['is too long', 'a'.repeat(MAX_REDACTION_PATTERN_LENGTH + 1)],
    ['is empty', ''],
    ['nests quantifiers', '(a+)+b'],
  ])('a pattern that %s is refused with invalid_params, without echoing it', (_why, pattern) => {
    let error: unknown;
    try {
      compileRedactionPatterns(['ok-\\d+', pattern]);
    } catch (e) {
      error = e;
    }
    expect(isLetKiteError(error, 'invalid_params')).toBe(true);
    expect((error as Error).message).not.toContain(pattern === '' ? '\u0000' : pattern);
    expect((error as { details?: unknown }).details).toEqual({ index: 1 });
  });
});
