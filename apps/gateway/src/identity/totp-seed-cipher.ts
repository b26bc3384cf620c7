import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { LetKiteError } from '@letkite/protocol';

/** How a sealed seed starts in the database; anything else is a plaintext seed from before encryption. */
const PREFIX = 'aes256gcm:v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * TOTP seeds at rest (issue #11): AES-256-GCM with a key kept apart from the database (a 0600 file next to it, or
 * LETKITE_SECRET_KEY), so a copy of `letkite.db` alone does not give anyone the second factor. Each seed is bound
 * to its row (`context`, e.g. the user id) as associated data: a sealed seed moved to another user's row does not
 * open.
 */
export class TotpSeedCipher {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`the TOTP seed key must be ${KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  seal(seed: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(seed, 'utf8'), cipher.final()]);
    return `${PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** The seed, or `internal` for a value sealed with another key, tampered with, or moved to another row. */
  open(sealed: string, context: string): string {
    if (!TotpSeedCipher.isSealed(sealed)) throw new LetKiteError('internal', 'the TOTP seed is not sealed');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new LetKiteError(
        'internal',
        'a TOTP seed does not open with this gateway’s secret key (was LETKITE_SECRET_KEY or secret.key changed?)',
      );
    }
  }
}

/** LETKITE_SECRET_KEY: 32 bytes as 64 hex digits or base64 (`openssl rand -base64 32`). */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const b = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (b.length === KEY_BYTES) return b;
  }
  return null;
}

/**
 * The secret key file in the data directory: read when it exists, else created (0600, exclusive create so two
 * starting processes cannot each write their own). A file that does not hold a key is an error, never replaced.
 */
export function loadOrCreateSecretKeyFile(file: string): Buffer {
  try {
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  chmodSync(file, 0o600);
  const key = parseSecretKey(readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte key (base64 or hex); restore it from a backup`);
  return key;
}
