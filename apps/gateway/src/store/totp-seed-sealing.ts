import { LetKiteError } from '@letkite/protocol';
import type { Challenge, TotpState } from '../identity/identity-store';
import { TotpSeedCipher } from '../identity/totp-seed-cipher';

/**
 * How both dialects' identity stores keep TOTP seeds at rest: sealed with the process's cipher, bound to their row
 * by the same associated data on both (so a sealed value moves between them). Without a cipher (a tool that opens
 * the database only for tokens or machines) seeds can be neither read nor written: every use fails closed.
 */
export class TotpSeedSealing {
  constructor(private readonly cipher: TotpSeedCipher | null) {}

  private require(): TotpSeedCipher {
    if (!this.cipher) throw new LetKiteError('internal', 'this process has no secret key for TOTP seeds');
    return this.cipher;
  }

  /** The `totp_secrets.secret` to store for `userId`'s plaintext seed. */
  sealSeed(userId: string, secret: string): string {
    return this.require().seal(secret, seedContext(userId));
  }

  /**
   * The TOTP state a `totp_secrets` row holds. A row written in plaintext (by an older process, by hand, or by a
   * tool without the key) answers its seed and gives the sealed value the store writes back (`reseal`).
   */
  totpFromRow(r: { userId: string; secret: string; lastStep: number | null }): {
    state: TotpState;
    reseal: string | null;
  } {
    const cipher = this.require();
    if (!TotpSeedCipher.isSealed(r.secret)) {
      return {
        state: { userId: r.userId, secret: r.secret, lastStep: r.lastStep },
        reseal: cipher.seal(r.secret, seedContext(r.userId)),
      };
    }
    return {
      state: { userId: r.userId, secret: cipher.open(r.secret, seedContext(r.userId)), lastStep: r.lastStep },
      reseal: null,
    };
  }

  /** The `auth_challenges.value` to store: a seed waiting to be confirmed is sealed like a stored seed. */
  challengeValue(c: { id: string; purpose: string; value: string }): string {
    return isSeedChallenge(c.purpose) ? this.require().seal(c.value, challengeContext(c.id)) : c.value;
  }

  /** A stored challenge as its taker reads it: a seed challenge's value opened. */
  openChallenge<T extends Pick<Challenge, 'id' | 'purpose' | 'value'>>(c: T): T {
    return isSeedChallenge(c.purpose) ? { ...c, value: this.require().open(c.value, challengeContext(c.id)) } : c;
  }
}

/** Challenges that hold a TOTP secret waiting to be confirmed (sealed like the stored seeds). */
export function isSeedChallenge(purpose: string): boolean {
  return purpose === 'totp-setup' || purpose === 'onboard-totp';
}

/** Associated data binding a sealed seed to its row. */
function seedContext(userId: string): string {
  return `totp_secrets:${userId}`;
}

/** Associated data binding a sealed challenge value to its row. */
function challengeContext(challengeId: string): string {
  return `auth_challenges:${challengeId}`;
}
