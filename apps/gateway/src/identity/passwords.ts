import { LetKiteError } from '@letkite/protocol';
import { hash, verify } from '@node-rs/argon2';
import { z } from 'zod';

/** A password: long enough to resist guessing, short enough not to be a hashing DoS. */
export const Password = z.string().min(12, 'a password needs at least 12 characters').max(256);

// argon2id (algorithm 2) with the library's defaults: 19 MiB, 2 passes, 1 lane — OWASP's recommended minimum.
const ARGON2ID = 2;

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID });
}

export async function passwordMatches(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | null = null;
/** Spends the same time as a real check, so an unknown e-mail cannot be told apart by timing. */
export async function burnPasswordCheck(password: string): Promise<void> {
  dummy ??= hashPassword('letkite-dummy-password');
  await passwordMatches(await dummy, password);
}

export function requireNewPassword(password: string): void {
  const r = Password.safeParse(password);
  if (!r.success) throw new LetKiteError('invalid_params', r.error.issues[0]?.message ?? 'bad password');
}
