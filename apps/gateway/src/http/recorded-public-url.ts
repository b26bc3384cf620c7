import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The address a running gateway answers on, recorded in its data directory so that `letkite admin join-token`, run
 * later by an operator who has only the data directory (as infra/README.md says: `sudo -u letkite-gateway
 * LETKITE_DATA=…`), prints the install line with the public URL instead of localhost. The gateway's settings file
 * (/etc/letkite/gateway.env) is root's and 0600, so the CLI cannot read LETKITE_PUBLIC_URL from it. Not a secret:
 * the file is world-readable like the URL itself.
 */
export function recordedPublicUrlFile(dataDir: string): string {
  return join(dataDir, 'public-url');
}

/** Written once the gateway listens; atomic (a reader sees the old URL or the new one, never half of one). */
export function recordPublicUrl(dataDir: string, url: string): void {
  const file = recordedPublicUrlFile(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${url}\n`, { mode: 0o644 });
  renameSync(temp, file);
}

/** The recorded URL, or undefined when no gateway has run on this data directory (or the file is not a URL). */
export function readRecordedPublicUrl(dataDir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(recordedPublicUrlFile(dataDir), 'utf8').trim();
  } catch {
    return undefined;
  }
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? text : undefined;
  } catch {
    return undefined;
  }
}
