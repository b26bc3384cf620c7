/**
 * Clearly fake but format-valid secrets for the tests. Built by concatenation so that no secret scanner flags the
 * repository; the filler is deterministic (`seed` picks where in the cycle it starts).
 */
const cycle = 'A1b2C3d4E5f6G7h8J9k0LmNpQrStUvWxYz';

export function filler(length: number, seed = 0, alphabet = cycle): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(i * 7 + seed) % alphabet.length];
  return out;
}

const upperDigits = 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L';
const base64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** One token per format, by rule id. Each is masked whole wherever it stands after a separator. */
export function fakeTokens(seed = 0): Record<string, string> {
  return {
    'aws-access-key-id': `AK${'IA'}${filler(16, seed, upperDigits)}`,
    'github-token': `gh${'p_'}${filler(36, seed)}`,
    'github-oauth-token': `gh${'o_'}${filler(36, seed)}`,
    'github-user-token': `gh${'u_'}${filler(36, seed)}`,
    'github-server-token': `gh${'s_'}${filler(36, seed)}`,
    'github-refresh-token': `gh${'r_'}${filler(36, seed)}`,
    'github-fine-grained-token': `github${'_pat_'}${filler(22, seed)}_${filler(59, seed + 3)}`,
    'gitlab-token': `gl${'pat-'}${filler(20, seed)}`,
    'slack-bot-token': `xo${'xb-'}1234567890-1234567890-${filler(24, seed)}`,
    'slack-user-token': `xo${'xp-'}1234567890-1234567890-${filler(32, seed)}`,
    'slack-app-token': `xa${'pp-1-'}A0123456789-${filler(40, seed)}`,
    'stripe-live-key': `sk${'_live_'}${filler(24, seed)}`,
    'stripe-restricted-key': `rk${'_live_'}${filler(24, seed)}`,
    'stripe-test-key': `sk${'_test_'}${filler(24, seed)}`,
    'stripe-webhook-secret': `wh${'sec_'}${filler(32, seed)}`,
    'google-api-key': `AI${'za'}${filler(35, seed)}`,
    'google-oauth-client-secret': `GOC${'SPX-'}${filler(28, seed)}`,
    'google-oauth-access-token': `ya${'29.'}${filler(60, seed)}`,
    'openai-project-key': `sk-${'proj-'}${filler(48, seed)}`,
    'openai-legacy-key': `sk-${filler(48, seed)}`,
    'anthropic-key': `sk-${'ant-api03-'}${filler(93, seed)}AA`,
    'npm-token': `np${'m_'}${filler(36, seed)}`,
    'age-secret-key': `AGE-${'SECRET-KEY-1'}${filler(58, seed, upperDigits)}`,
    jwt: `ey${'J'}hbGciOiJIUzI1NiJ9.ey${'J'}zdWIiOiIxMjM0NTY3ODkwIn0.${filler(43, seed)}`,
  };
}

/** A PEM block whose body is fake base64 lines of 64 characters. */
export function fakePrivateKey(label = 'RSA PRIVATE KEY', lines = 6, seed = 0): string {
  const body = Array.from({ length: lines }, (_, i) => filler(i === lines - 1 ? 24 : 64, seed + i, base64));
  return [`-----BEGIN ${label}-----`, ...body, `-----END ${label}-----`].join('\n');
}

/** Folds every line of the text at `width` characters, like `fold -w` or a terminal wrapping. */
export function fold(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => line.match(new RegExp(`.{1,${width}}`, 'g'))?.join('\n') ?? '')
    .join('\n');
}
