import { expect, test } from 'vitest';
import { isValidCodeChallenge, verifyPkce } from './pkce';

// The example of RFC 7636 Appendix B.
const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

test('the RFC 7636 example verifier matches its S256 challenge', () => {
  expect(isValidCodeChallenge(challenge)).toBe(true);
  expect(verifyPkce(verifier, challenge)).toBe(true);
});

test.each([
  ['another verifier', 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXx'],
  ['the challenge itself (plain method)', challenge],
  ['a verifier that is too short', 'abc'],
  ['no verifier', undefined],
])('%s is refused', (_what, candidate) => {
  expect(verifyPkce(candidate, challenge)).toBe(false);
});

test.each(['', 'short', `${challenge}=`, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM'])(
  'challenge %j is malformed',
  (c) => {
    expect(isValidCodeChallenge(c)).toBe(false);
  },
);
