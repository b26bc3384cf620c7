import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LetKiteError } from '@letkite/protocol';
import { classifyAddress } from './address-classifier';
import { checkClientMetadata } from './client-metadata';
import type { ClientMetadata } from './oauth-store';

/** Limits of a client-ID metadata document fetch. */
export interface ClientDocumentOptions {
  /**
   * Development and tests only: allow documents on loopback addresses, over http as well. Never on in production:
   * it lets any client make the gateway fetch from itself.
   */
  allowLoopback: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** Resolves a host name to its addresses; tests swap it to point a name at a private address. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_BYTES = 5 * 1024;
const DEFAULT_TTL_MS = 5 * 60_000;
const MAX_TTL_MS = 60 * 60_000;
const MAX_CACHE_ENTRIES = 500;

/** Whether a client_id is a URL naming a metadata document (rather than an id we issued at registration). */
export function isClientIdUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

function refuse(url: string, why: string): LetKiteError {
  return new LetKiteError('invalid_params', `client metadata document "${url}" refused: ${why}`);
}

function cacheTtl(res: IncomingMessage): number {
  const cc = res.headers['cache-control'] ?? '';
  if (/no-store|no-cache/i.test(cc)) return 0;
  const m = /max-age=(\d+)/i.exec(cc);
  return m?.[1] === undefined ? DEFAULT_TTL_MS : Math.min(Number(m[1]) * 1000, MAX_TTL_MS);
}

/**
 * Fetches client-ID metadata documents (the client_id is an https URL whose JSON describes the client) with SSRF
 * guards: https only, the host resolved here and every address checked (no loopback, private, link-local,
 * multicast …), the connection made to the checked address, no redirects, a size and a time limit. Results are
 * cached per URL for the document's max-age (5 minutes by default, at most an hour).
 */
export class ClientDocumentFetcher {
  private readonly cache = new Map<string, { metadata: ClientMetadata; until: number }>();
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly resolve: (hostname: string) => Promise<LookupAddress[]>;

  constructor(private readonly options: ClientDocumentOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.resolve = options.resolve ?? ((hostname) => dnsLookup(hostname, { all: true, verbatim: true }));
  }

  /** The client's metadata, or `invalid_params` saying why the document was refused. */
  async fetch(clientId: string, now: Date): Promise<ClientMetadata> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > now.getTime()) return cached.metadata;
    const url = this.checkUrl(clientId);
    const { body, ttl } = await this.download(url, clientId);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw refuse(clientId, 'it is not JSON');
    }
    if (typeof json !== 'object' || json === null || (json as { client_id?: unknown }).client_id !== clientId) {
      throw refuse(clientId, 'its client_id does not equal the URL it was fetched from');
    }
    if ('client_secret' in json || 'client_secret_expires_at' in json) {
      throw refuse(clientId, 'a metadata document cannot carry a client secret');
    }
    const checked = checkClientMetadata(json);
    if (!checked.ok) throw refuse(clientId, checked.error);
    if (ttl > 0) {
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(clientId, { metadata: checked.metadata, until: now.getTime() + ttl });
    }
    return checked.metadata;
  }

  private checkUrl(clientId: string): URL {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      throw refuse(clientId, 'it is not a URL');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.options.allowLoopback)) {
      throw refuse(clientId, 'it must use https');
    }
    if (url.pathname === '/' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw refuse(clientId, 'it needs a path and no fragment or credentials');
    }
    return url;
  }

  /** Whether the gateway may connect to this address. */
  private allowed(address: string): boolean {
    const cls = classifyAddress(address);
    return cls === 'public' || (cls === 'loopback' && this.options.allowLoopback);
  }

  private async addressFor(url: URL, clientId: string): Promise<LookupAddress> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: LookupAddress[];
    try {
      addresses = classifyAddress(host) === 'invalid' ? await this.resolve(host) : [{ address: host, family: 0 }];
    } catch {
      throw refuse(clientId, `its host "${host}" does not resolve`);
    }
    // Every address must pass: a name that resolves to one public and one private address is a rebinding trick.
    const first = addresses[0];
    if (!first || !addresses.every((a) => this.allowed(a.address))) {
      throw refuse(clientId, `its host "${host}" resolves to an address the gateway does not fetch from`);
    }
    if (url.protocol === 'http:' && classifyAddress(first.address) !== 'loopback') {
      throw refuse(clientId, 'it must use https');
    }
    return { address: first.address, family: first.family || (first.address.includes(':') ? 6 : 4) };
  }

  private async download(url: URL, clientId: string): Promise<{ body: string; ttl: number }> {
    const pinned = await this.addressFor(url, clientId);
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json' },
          timeout: this.timeoutMs,
          // The connection goes to the address checked above, never to a fresh resolution (DNS rebinding); TLS
          // still verifies the certificate against the host name.
          lookup: (_hostname, options, callback) => {
            if ((options as { all?: boolean }).all) {
              (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [pinned]);
            } else callback(null, pinned.address, pinned.family);
          },
        },
        (res) => {
          if ((res.statusCode ?? 0) >= 300 && (res.statusCode ?? 0) < 400) {
            res.destroy();
            reject(refuse(clientId, 'it redirects, and redirects are not followed'));
            return;
          }
          if (res.statusCode !== 200) {
            res.destroy();
            reject(refuse(clientId, `it answered HTTP ${res.statusCode}`));
            return;
          }
          const length = Number(res.headers['content-length'] ?? 0);
          if (length > this.maxBytes) {
            res.destroy();
            reject(refuse(clientId, `it is larger than ${this.maxBytes} bytes`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > this.maxBytes) {
              res.destroy();
              reject(refuse(clientId, `it is larger than ${this.maxBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => resolve({ body: Buffer.concat(chunks).toString('utf8'), ttl: cacheTtl(res) }));
          res.on('error', () => reject(refuse(clientId, 'the download failed')));
        },
      );
      const deadline = setTimeout(() => {
        req.destroy();
        reject(refuse(clientId, `it took longer than ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      req.on('close', () => clearTimeout(deadline));
      req.on('timeout', () => {
        req.destroy();
        reject(refuse(clientId, `it took longer than ${this.timeoutMs} ms`));
      });
      req.on('error', (err) =>
        reject(refuse(clientId, `the download failed (${(err as NodeJS.ErrnoException).code ?? 'error'})`)),
      );
      req.end();
    });
  }
}
