/**
 * The catalogue of known secret formats. Each rule is one regex; `scanSecrets` runs them all. Quantifiers are
 * bounded and no group is both repeated and internally repeated, so no rule backtracks catastrophically. Private
 * key blocks are not here: they span lines and are paired by `private-keys.ts`.
 */
export interface SecretRule {
  /** Stable name, used by tests and the README. */
  readonly id: string;
  /**
   * A global regex. When it has named groups starting with `secret` (compiled with the `d` flag), only the first of
   * them that took part in the match is masked, so the key name around it stays readable; otherwise the whole
   * match is masked.
   */
  readonly pattern: RegExp;
  /** Also searched in the text with its line breaks removed, so a token wrapped by a terminal or `fold` is found. */
  readonly wraps: boolean;
  /** The character before the match must not be a letter or digit (a line start counts as a boundary). */
  readonly boundary: boolean;
  /** A further check on the secret, for formats whose shape alone would also match ordinary words. */
  readonly accept?: (secret: string) => boolean;
  /**
   * Literal text every match contains (lower case when the pattern ignores case): when the searched text holds
   * none of them the regex is skipped, which keeps ordinary output fast.
   */
  readonly needles?: readonly string[];
}

/** Real API keys are random: at least one digit and one capital, which hyphenated prose (`sk-learn-…`) lacks. */
function looksRandom(secret: string): boolean {
  return /[0-9]/.test(secret) && /[A-Z]/.test(secret);
}

/** Values that name a secret rather than hold one: already masked, or a variable reference. */
function isPlaceholder(value: string): boolean {
  return /^\*+$/.test(value) || /^\$\{\{/.test(value) || /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(value);
}

const notPlaceholder = (value: string): boolean => !isPlaceholder(value);

// `key = value` with the value double-quoted (escapes allowed), single-quoted, or bare up to a separator.
const assignedValue = String.raw`(?:"(?<secret>(?:[^"\\\r\n]|\\.){1,1024})"|'(?<secret2>[^'\r\n]{1,1024})'|(?<secret3>[^\s"',;&]{1,1024}))`;
const secretKeyword =
  '(?:pass(?:word|wd|phrase)|secret(?:[_-]?key(?:[_-]?base)?)?|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)';
// A `--flag value` value may not start with `-`, so `--token --verbose` is left alone.
const flagValue = String.raw`(?:"(?<secret>(?:[^"\\\r\n]|\\.){1,1024})"|'(?<secret2>[^'\r\n]{1,1024})'|(?<secret3>[^\s"'-][^\s"']{0,1023}))`;
// `=`, `:=` and `=>` as they come; a bare `:` only as YAML writes it (`key: value`), after a quoted JSON key, or
// before a quoted value, so `x-access-token:…@host` in a URL is left to the url rule.
const assignmentOperator = String.raw`(?:["']?[ \t]{0,8}(?:=>|:=|=)[ \t]{0,8}|["'][ \t]{0,8}:[ \t]{0,8}|[ \t]{0,8}:[ \t]{1,8}|:(?=["']))`;
const flagKeyword = '(?:password|passwd|passphrase|token|secret|api-key|access-key|client-secret)';

export const secretRules: readonly SecretRule[] = [
  // LetKite's own secrets: 32 random bytes in base64url behind a prefix (auth/secrets.ts, identity/*): API token
  // `lk_`, join token `lkj_`, OAuth access/refresh token and code `lka_`/`lkr_`/`lkc_`, session cookie `lks_`,
  // invitation `lkinv_`, setup link `lksetup_`. Fixed length, so a token ending a line never reaches into the next.
  {
    id: 'letkite-token',
    pattern: /lk(?:j|a|r|c|s|inv|setup)?_[A-Za-z0-9_-]{43}/g,
    wraps: true,
    boundary: true,
    needles: ['lk'],
  },
  // An authenticator's key as an `otpauth://` URI carries it (the `secret=` assignment rule catches it too).
  {
    id: 'otpauth-secret',
    pattern: /otpauth:\/\/[th]otp\/[^\s?]{0,512}\?(?:[^\s#]{0,512}?[&;])?secret=(?<secret>[A-Za-z2-7=]{8,512})/dgi,
    wraps: true,
    boundary: false,
    needles: ['otpauth:'],
  },
  {
    id: 'aws-access-key-id',
    pattern: /(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}/g,
    wraps: true,
    boundary: true,
  },
  {
    id: 'aws-secret-access-key',
    pattern: /aws_?secret_?access_?key["']?[ \t]{0,8}(?:=>|:=|[:=])[ \t]{0,8}["']?(?<secret>[A-Za-z0-9/+]{40})/dgi,
    wraps: true,
    boundary: false,
    needles: ['secret'],
  },
  // Fixed length (GitHub's own scanners use {36}), so a token ending a line never reaches into the next one.
  { id: 'github-token', pattern: /gh[pousr]_[A-Za-z0-9]{36}/g, wraps: true, boundary: true },
  {
    id: 'github-fine-grained-token',
    pattern: /github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}/g,
    wraps: true,
    boundary: true,
    needles: ['github_pat_'],
  },
  {
    id: 'gitlab-token',
    pattern: /gl(?:pat|dt|rt|ptt|cbt|soat|oas)-[A-Za-z0-9_.-]{20,300}/g,
    wraps: true,
    boundary: true,
    needles: ['gl'],
  },
  { id: 'slack-token', pattern: /xox[abposer]-[A-Za-z0-9-]{10,250}/g, wraps: true, boundary: true, needles: ['xox'] },
  {
    id: 'slack-app-token',
    pattern: /xapp-[0-9]-[A-Za-z0-9-]{10,250}/g,
    wraps: true,
    boundary: true,
    needles: ['xapp-'],
  },
  {
    id: 'slack-webhook',
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/(?<secret>[A-Za-z0-9_/-]{16,300})/dg,
    wraps: true,
    boundary: false,
    needles: ['hooks.slack.com'],
  },
  {
    id: 'stripe-key',
    pattern: /(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}/g,
    wraps: true,
    boundary: true,
    needles: ['_live_', '_test_'],
  },
  {
    id: 'stripe-webhook-secret',
    pattern: /whsec_[A-Za-z0-9+/=]{24,128}/g,
    wraps: true,
    boundary: true,
    needles: ['whsec_'],
  },
  { id: 'google-api-key', pattern: /AIza[A-Za-z0-9_-]{35}/g, wraps: true, boundary: true, needles: ['AIza'] },
  {
    id: 'google-oauth-client-secret',
    pattern: /GOCSPX-[A-Za-z0-9_-]{28}/g,
    wraps: true,
    boundary: true,
    needles: ['GOCSPX-'],
  },
  {
    id: 'google-oauth-access-token',
    pattern: /ya29\.[A-Za-z0-9_-]{20,2048}/g,
    wraps: true,
    boundary: true,
    needles: ['ya29.'],
  },
  {
    id: 'anthropic-key',
    pattern: /sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,250}/g,
    wraps: true,
    boundary: true,
    needles: ['sk-ant-'],
  },
  {
    id: 'openai-style-key',
    pattern: /sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}/g,
    wraps: true,
    boundary: true,
    needles: ['sk-'],
    accept: looksRandom,
  },
  { id: 'npm-token', pattern: /npm_[A-Za-z0-9]{36}/g, wraps: true, boundary: true, needles: ['npm_'] },
  {
    id: 'age-secret-key',
    pattern: /AGE-SECRET-KEY-1[0-9A-Z]{58}/g,
    wraps: true,
    boundary: true,
    needles: ['AGE-SECRET-KEY-1'],
  },
  {
    id: 'jwt',
    pattern: /eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,4096}/g,
    wraps: true,
    boundary: true,
    needles: ['eyJ'],
  },
  {
    id: 'connection-string-key',
    pattern: /(?:AccountKey|SharedAccessKey|SharedSecret)=(?<secret>[A-Za-z0-9+/=%]{8,512})/dgi,
    wraps: true,
    boundary: false,
    needles: ['accountkey', 'sharedaccesskey', 'sharedsecret'],
  },
  // ODBC `PWD=…;` only with the `;` that ends it, so the shell's `PWD=/home/me` survives.
  {
    id: 'connection-string-pwd',
    pattern: /pwd=(?<secret>[^;\s]{1,256})(?=;)/dgi,
    wraps: false,
    boundary: true,
    needles: ['pwd='],
    accept: notPlaceholder,
  },
  {
    id: 'sas-signature',
    pattern: /[?&]sig=(?<secret>[A-Za-z0-9%+/=]{16,512})/dg,
    wraps: true,
    boundary: false,
    needles: ['sig='],
  },
  {
    id: 'url-credentials',
    pattern: /:\/\/[^\s:/@?#"'<>]{0,256}:(?<secret>[^\s/@?#"'<>]{1,512})@/dg,
    wraps: true,
    boundary: false,
    needles: ['://'],
    accept: notPlaceholder,
  },
  {
    id: 'authorization-header',
    pattern:
      /authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:(?:bearer|basic|token|bot|apikey)[ \t]{1,8})?(?<secret>[A-Za-z0-9._~+/=:-]{8,4096})/dgi,
    wraps: true,
    boundary: false,
    needles: ['authorization'],
  },
  {
    id: 'bearer-token',
    pattern: /bearer[ \t]{1,8}(?<secret>[A-Za-z0-9._~+/-]{16,4096}=*)/dgi,
    wraps: true,
    boundary: true,
    needles: ['bearer'],
  },
  // Assignments are single-line: a bare value has no known end, so joining lines would swallow the next line.
  {
    id: 'secret-assignment',
    pattern: new RegExp(`${secretKeyword}${assignmentOperator}${assignedValue}`, 'dgi'),
    wraps: false,
    boundary: false,
    needles: ['pass', 'secret', 'token', 'key', 'credential'],
    accept: notPlaceholder,
  },
  {
    id: 'secret-flag',
    pattern: new RegExp(String.raw`--${flagKeyword}[ \t]{1,8}${flagValue}`, 'dgi'),
    wraps: false,
    boundary: false,
    needles: ['--'],
    accept: notPlaceholder,
  },
];
