import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
} from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { gatewayProofText, type HandshakeTranscript, LetKiteError } from '@letkite/protocol';

/** The identity key's file name in the data directory (docs/design/agent-trust.md). */
export const GATEWAY_IDENTITY_FILE = 'gateway-identity.pem';

/**
 * The gateway's long-lived Ed25519 identity: agents pin its public key at enrollment and require a signature by it
 * on every connect, so whoever merely answers on the gateway's address cannot command them.
 */
export interface GatewayIdentity {
  /** SPKI DER, base64: what enrollment hands the agent to pin. */
  readonly publicKey: string;
  /** `SHA256:<base64>` of the public key, for logs and people comparing keys. */
  readonly fingerprint: string;
  /** Signs the handshake transcript of one agent connection (base64 signature for the welcome frame). */
  proveHandshake(t: HandshakeTranscript): string;
}

function identityFrom(privateKey: KeyObject): GatewayIdentity {
  const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return {
    publicKey: der.toString('base64'),
    fingerprint: `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`,
    proveHandshake: (t) => sign(null, Buffer.from(gatewayProofText(t)), privateKey).toString('base64'),
  };
}

/**
 * Writes a new key to `file` unless one is already there. The key goes to a private temporary file first and is
 * then hard-linked into place: link() fails if the name exists, so when several gateways start at once exactly one
 * key wins and nobody ever reads a half-written file.
 */
function createOnce(file: string): void {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, pem);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * Loads the gateway identity from `file`, creating it the first time. Fails closed, never replaces a key: a new
 * key would silently un-pin every enrolled agent, and a key others could read may already be someone else's.
 */
export function loadGatewayIdentity(file: string): GatewayIdentity {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    createOnce(file);
    text = readFileSync(file, 'utf8');
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new LetKiteError(
      'forbidden',
      `the gateway identity key ${file} is readable by others (mode ${mode.toString(8)}); make it 0600 if it never leaked, or re-enroll every agent with a new key`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new LetKiteError('internal', `the gateway identity key ${file} is not a private key; refusing to replace it`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new LetKiteError('internal', `the gateway identity key ${file} is not an Ed25519 key`);
  }
  return identityFrom(key);
}

/** The identity file of a data directory. */
export function gatewayIdentityFile(dataDir: string): string {
  return join(dataDir, GATEWAY_IDENTITY_FILE);
}
