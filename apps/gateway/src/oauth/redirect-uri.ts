import { LetKiteError } from '@letkite/protocol';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** Schemes a redirect may never use, whatever the client declares. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'filesystem:']);

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/** A loopback redirect of a native app (RFC 8252 §7.3): http on 127.0.0.1, [::1] or localhost. */
export function isLoopbackRedirect(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Checks a redirect URI a client registers: absolute, no fragment, https, http only on loopback, or a private-use
 * scheme of a native app (`cursor://…`). Throws `invalid_params` quoting the URI.
 */
export function assertRegistrableRedirectUri(uri: string): void {
  const url = parse(uri);
  if (!url) throw new LetKiteError('invalid_params', `redirect URI "${uri}" is not an absolute URI`);
  if (url.hash !== '' || uri.includes('#')) {
    throw new LetKiteError('invalid_params', `redirect URI "${uri}" must not have a fragment`);
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) {
    throw new LetKiteError('invalid_params', `redirect URI "${uri}" uses a forbidden scheme`);
  }
  if (url.protocol === 'http:' && !isLoopbackRedirect(url)) {
    throw new LetKiteError('invalid_params', `redirect URI "${uri}" must use https unless it is on loopback`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new LetKiteError('invalid_params', `redirect URI "${uri}" must not carry credentials`);
  }
}

/**
 * Whether a redirect URI in an authorization request matches one the client registered: exactly, except that a
 * loopback redirect may use any port (native apps pick a free one at run time, RFC 8252 §7.3).
 */
export function redirectUriMatches(requested: string, registered: readonly string[]): boolean {
  if (registered.includes(requested)) return true;
  const req = parse(requested);
  if (!req || !isLoopbackRedirect(req)) return false;
  return registered.some((r) => {
    const reg = parse(r);
    if (!reg || !isLoopbackRedirect(reg)) return false;
    return (
      reg.hostname === req.hostname &&
      reg.pathname === req.pathname &&
      reg.search === req.search &&
      reg.username === req.username &&
      reg.password === req.password
    );
  });
}

/** What the consent page shows as where the person is sent back: the host, or the scheme of a native app. */
export function redirectTarget(uri: string): string {
  const url = parse(uri);
  if (!url) return uri;
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  return `${url.protocol}//${url.host}`;
}
