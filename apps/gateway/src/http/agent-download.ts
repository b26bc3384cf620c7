import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LetKiteError } from '@letkite/protocol';
import { Hono } from 'hono';
import { type AgentArtefact, renderInstallScript } from './install-script';

/**
 * Where `npm run build` puts the packed agents (`dist/letkite-agent-<os>-<arch>.tar.gz` in the checkout): the
 * repository's dist/ from source, the parent of dist/cli/ when built.
 */
export const AGENT_DIST = import.meta.letkiteBundle
  ? fileURLToPath(new URL('..', import.meta.url))
  : fileURLToPath(new URL('../../../../dist', import.meta.url));

const tarballName = /^letkite-agent-([a-z0-9]+-[a-z0-9_]+)\.tar\.gz$/;

/** The header with the tarball's SHA-256 (hex), for clients that check it without the install script. */
export const SHA256_HEADER = 'X-LetKite-SHA256';

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The agent builds in `dir`, each with its checksum (read at each request: a rebuild is served at once). */
export function agentArtefacts(dir: string): AgentArtefact[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const platform = tarballName.exec(name)?.[1];
    return platform ? [{ platform, sha256: sha256(readFileSync(join(dir, name))) }] : [];
  });
}

/**
 * `GET /agent/download/<os>-<arch>`: the packed agent, with its SHA-256 in `X-LetKite-SHA256`; and
 * `GET /agent/install.sh`: the installer with this gateway's URL and those checksums written in. Both are public:
 * the agent holds no secret, and joining needs a one-time token the script gets as an argument.
 */
export function agentDownloadRoutes(deps: { publicUrl: string; agentDist?: string }): Hono {
  const dir = deps.agentDist ?? AGENT_DIST;
  const app = new Hono();
  app.get('/agent/download/:platform', (c) => {
    const platform = c.req.param('platform');
    if (!/^[a-z0-9]+-[a-z0-9_]+$/.test(platform)) {
      throw new LetKiteError('invalid_params', `"${platform}" is not an <os>-<arch> such as linux-x64`);
    }
    let bytes: Buffer;
    try {
      // One read serves the bytes and their checksum, so a rebuild in between cannot make them disagree.
      bytes = readFileSync(join(dir, `letkite-agent-${platform}.tar.gz`));
    } catch {
      throw new LetKiteError('not_found', `this gateway serves no agent for ${platform}`, { platform });
    }
    return c.body(new Uint8Array(bytes), 200, {
      'Content-Type': 'application/gzip',
      'Content-Disposition': `attachment; filename="letkite-agent-${platform}.tar.gz"`,
      'Cache-Control': 'no-store',
      [SHA256_HEADER]: sha256(bytes),
    });
  });
  app.get('/agent/install.sh', (c) =>
    c.body(renderInstallScript(deps.publicUrl, agentArtefacts(dir)), 200, {
      'Content-Type': 'text/x-shellscript; charset=utf-8',
      'Cache-Control': 'no-store',
    }),
  );
  return app;
}
