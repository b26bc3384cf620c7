import { spawnSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { userInfo } from 'node:os';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { EnrollResponse, ErrorPayload, LetKiteError } from '@letkite/protocol';
import { agentInfo } from './agent-info';
import { certificatePin } from './gateway-trust';
import { checkGatewayUrl } from './gateway-url';
import { type AgentState, saveState } from './state';

/** Largest enrollment answer we read. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs JSON and reads the answer, remembering the pin of the TLS certificate that carried it (validated as usual:
 * chain and host name). A fresh connection (`agent: false`) so the pin is of this very exchange.
 */
function postJson(url: URL, body: string): Promise<{ status: number; body: unknown; tlsPin: string | null }> {
  return new Promise((resolve, reject) => {
    let tlsPin: string | null = null;
    const options = {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      checkServerIdentity: (host: string, cert: PeerCertificate) => {
        const usual = checkServerIdentity(host, cert);
        if (!usual) tlsPin = certificatePin(cert);
        return usual;
      },
    };
    const onResponse = (res: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) res.destroy(new Error('enrollment answer too large'));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {}
        resolve({ status: res.statusCode ?? 0, body: parsed, tlsPin });
      });
    };
    const req =
      url.protocol === 'https:' ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('enrollment timed out')));
    req.end(body);
  });
}

/**
 * Enrolls this machine: makes an Ed25519 key pair, spends the join token on it at the gateway, pins the gateway's
 * identity key it answers with (and, over https, its TLS certificate), and saves the state. The private key never
 * leaves the machine; the join token travels in the request body, never in a URL.
 */
export async function joinGateway(input: {
  gatewayUrl: string;
  joinToken: string;
  stateDir: string;
  name?: string;
  insecure?: boolean;
}): Promise<AgentState> {
  const gateway = checkGatewayUrl(input.gatewayUrl, input.insecure ?? false);
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const res = await postJson(
    new URL('/agent/v1/enroll', gateway),
    JSON.stringify({
      join_token: input.joinToken,
      public_key: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      info: agentInfo(),
      ...(input.name ? { name: input.name } : {}),
    }),
  );
  const body = res.body;
  if (res.status < 200 || res.status > 299) {
    const err = ErrorPayload.safeParse((body as { error?: unknown } | null)?.error);
    if (err.success) throw LetKiteError.fromPayload(err.data);
    throw new LetKiteError('internal', `enrollment failed with HTTP ${res.status}`);
  }
  const enrolled = EnrollResponse.safeParse(body);
  if (!enrolled.success) {
    throw new LetKiteError(
      'protocol_error',
      'the gateway did not answer the enrollment with its identity key (is it an older LetKite?); nothing was saved',
    );
  }
  try {
    if (
      createPublicKey({ key: Buffer.from(enrolled.data.gateway_public_key, 'base64'), format: 'der', type: 'spki' })
        .asymmetricKeyType !== 'ed25519'
    )
      throw new Error('not ed25519');
  } catch {
    throw new LetKiteError(
      'protocol_error',
      'the gateway identity key is not an Ed25519 public key; nothing was saved',
    );
  }
  if (gateway.protocol === 'https:' && !res.tlsPin) {
    throw new LetKiteError('protocol_error', 'could not read the gateway TLS certificate to pin; nothing was saved');
  }
  const state: AgentState = {
    gateway_url: gateway.toString(),
    machine_id: enrolled.data.machine_id,
    name: enrolled.data.name,
    private_key_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    insecure: input.insecure ?? false,
    gateway_public_key: enrolled.data.gateway_public_key,
    ...(res.tlsPin ? { gateway_tls_pin: res.tlsPin } : {}),
  };
  saveState(input.stateDir, state);
  return state;
}

/** The OS account the default ceiling names for running commands, and how it came to be. */
export interface RunAsAccount {
  account: string;
  /**
   * created: made now (system account, no login shell, no home); existing: was there; current_user: not root;
   * chosen: named with --run-as.
   */
  how: 'created' | 'existing' | 'current_user' | 'chosen';
}

/** The system account a root agent runs commands as, unless the ceiling names another. */
export const SYSTEM_RUN_AS = 'letkite';

export interface RunAsDeps {
  uid: number;
  currentUser: string;
  accountExists(name: string): boolean;
  /** Creates a system account with no login shell and no home; throws with the tool's message on failure. */
  createSystemAccount(name: string): void;
}

/**
 * Picks the account for `run_as` at join, so the ceiling never names an account that does not exist: as root, the
 * `letkite` system account (created when missing); otherwise the current user, the only account a non-root agent
 * can run commands as. An account named with `--run-as` must exist already.
 */
export function prepareRunAsAccount(chosen?: string, deps: RunAsDeps = systemRunAsDeps()): RunAsAccount {
  if (chosen !== undefined) {
    if (!/^[a-z_][a-z0-9_.-]{0,31}\$?$/i.test(chosen) || !deps.accountExists(chosen))
      throw new LetKiteError('invalid_params', `--run-as "${chosen}": there is no such account on this machine`);
    return { account: chosen, how: 'chosen' };
  }
  if (deps.uid !== 0) return { account: deps.currentUser, how: 'current_user' };
  if (deps.accountExists(SYSTEM_RUN_AS)) return { account: SYSTEM_RUN_AS, how: 'existing' };
  deps.createSystemAccount(SYSTEM_RUN_AS);
  return { account: SYSTEM_RUN_AS, how: 'created' };
}

/** The real system: `id` to look an account up, `useradd --system` to make one. */
export function systemRunAsDeps(): RunAsDeps {
  return {
    uid: process.getuid?.() ?? 0,
    currentUser: userInfo().username,
    accountExists: (name) => spawnSync('id', ['-u', name], { stdio: 'ignore' }).status === 0,
    createSystemAccount: (name) => {
      const nologin = ['/usr/sbin/nologin', '/sbin/nologin', '/bin/false'].find((p) => existsSync(p)) ?? '/bin/false';
      const r = spawnSync(
        'useradd',
        ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', nologin, name],
        { encoding: 'utf8' },
      );
      if (r.error || r.status !== 0) {
        throw new LetKiteError(
          'internal',
          `could not create the system account "${name}" with useradd: ${(r.stderr || r.error?.message || '').trim()}`,
        );
      }
    },
  };
}
