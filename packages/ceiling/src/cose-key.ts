/**
 * A passkey's public key as WebAuthn gives it (a COSE_Key, RFC 9052 §7, CBOR-encoded) → the algorithm and a JWK
 * that `crypto.createPublicKey({ format: 'jwk' })` accepts. Pure, so `parseCeilingToml` can refuse a pinned key it
 * could never verify with, and the agent reads the same thing it checked.
 */

/** The signature algorithms a pinned approver key may use (COSE algorithm ids -7, -8, -257). */
export const approverAlgorithms = ['ES256', 'EdDSA', 'RS256'] as const;
export type ApproverAlgorithm = (typeof approverAlgorithms)[number];

export type ApproverJwk =
  | { kty: 'EC'; crv: 'P-256'; x: string; y: string }
  | { kty: 'OKP'; crv: 'Ed25519'; x: string }
  | { kty: 'RSA'; n: string; e: string };

export interface ApproverKey {
  alg: ApproverAlgorithm;
  jwk: ApproverJwk;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** base64url (padding tolerated) → bytes; null when it is not base64url. */
export function decodeBase64url(text: string): Uint8Array | null {
  const clean = text.replace(/=+$/, '');
  if (!/^[A-Za-z0-9_-]*$/.test(clean) || clean.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (const ch of clean) {
    value = (value << 6) | B64URL.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 0xff;
    }
  }
  return out;
}

function encodeBase64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = i + 2 < bytes.length ? 4 : i + 1 < bytes.length ? 3 : 2;
    for (let c = 0; c < chars; c++) out += B64URL[(n >> (18 - 6 * c)) & 63];
  }
  return out;
}

type Cbor = number | Uint8Array | string | Cbor[] | Map<number | string, Cbor> | boolean | null;

/** A small CBOR reader for COSE keys: integers, byte and text strings, arrays, maps, simple values. */
function readCbor(bytes: Uint8Array, at: { i: number }, depth = 0): Cbor {
  if (depth > 8) throw new Error('nested too deeply');
  const first = bytes[at.i++];
  if (first === undefined) throw new Error('truncated');
  const major = first >> 5;
  const info = first & 31;
  let len = info;
  if (info >= 24) {
    const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : 0;
    if (size === 0) throw new Error('unsupported CBOR length');
    if (at.i + size > bytes.length) throw new Error('truncated');
    len = 0;
    for (let k = 0; k < size; k++) len = len * 256 + (bytes[at.i + k] as number);
    at.i += size;
  }
  switch (major) {
    case 0:
      return len;
    case 1:
      return -1 - len;
    case 2:
    case 3: {
      if (at.i + len > bytes.length) throw new Error('truncated');
      const slice = bytes.slice(at.i, at.i + len);
      at.i += len;
      return major === 2 ? slice : new TextDecoder('utf-8', { fatal: true }).decode(slice);
    }
    case 4: {
      const items: Cbor[] = [];
      for (let k = 0; k < len; k++) items.push(readCbor(bytes, at, depth + 1));
      return items;
    }
    case 5: {
      const map = new Map<number | string, Cbor>();
      for (let k = 0; k < len; k++) {
        const key = readCbor(bytes, at, depth + 1);
        if (typeof key !== 'number' && typeof key !== 'string') throw new Error('map key is not a number or text');
        if (map.has(key)) throw new Error('duplicate map key');
        map.set(key, readCbor(bytes, at, depth + 1));
      }
      return map;
    }
    case 7:
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22) return null;
      throw new Error('unsupported CBOR simple value');
    default:
      throw new Error('unsupported CBOR type');
  }
}

function bytesOf(map: Map<number | string, Cbor>, key: number, size?: number): Uint8Array {
  const v = map.get(key);
  if (!(v instanceof Uint8Array) || (size !== undefined && v.length !== size)) {
    throw new Error(`COSE parameter ${key} must be ${size ?? 'some'} bytes`);
  }
  return v;
}

/**
 * Reads a COSE public key (base64url). Throws an `Error` saying what is wrong: not base64url, not CBOR, or a key
 * type/algorithm other than ES256 (P-256), EdDSA (Ed25519) or RS256.
 */
export function parseCoseKey(base64urlKey: string): ApproverKey {
  const bytes = decodeBase64url(base64urlKey);
  if (!bytes || bytes.length === 0) throw new Error('is not base64url');
  const at = { i: 0 };
  let decoded: Cbor;
  try {
    decoded = readCbor(bytes, at);
  } catch (err) {
    throw new Error(`is not a COSE key (${(err as Error).message})`);
  }
  if (!(decoded instanceof Map)) throw new Error('is not a COSE key (not a CBOR map)');
  if (at.i !== bytes.length) throw new Error('is not a COSE key (bytes after the key)');
  const kty = decoded.get(1);
  const alg = decoded.get(3);
  if (kty === 2 && alg === -7 && decoded.get(-1) === 1) {
    const x = bytesOf(decoded, -2, 32);
    const y = bytesOf(decoded, -3, 32);
    return { alg: 'ES256', jwk: { kty: 'EC', crv: 'P-256', x: encodeBase64url(x), y: encodeBase64url(y) } };
  }
  if (kty === 1 && alg === -8 && decoded.get(-1) === 6) {
    return { alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64url(bytesOf(decoded, -2, 32)) } };
  }
  if (kty === 3 && alg === -257) {
    const n = bytesOf(decoded, -1);
    if (n.length < 256) throw new Error('is an RSA key shorter than 2048 bits');
    return { alg: 'RS256', jwk: { kty: 'RSA', n: encodeBase64url(n), e: encodeBase64url(bytesOf(decoded, -2)) } };
  }
  throw new Error(
    `is a COSE key this machine cannot verify with (kty ${String(kty)}, alg ${String(alg)}): use ES256 (P-256), EdDSA (Ed25519) or RS256`,
  );
}
