import { z } from 'zod';
import type { ClientMetadata } from './oauth-store';
import { assertRegistrableRedirectUri } from './redirect-uri';

const MAX_REDIRECT_URIS = 10;

const httpsUrl = z
  .url({ protocol: /^https$/ })
  .max(2000)
  .optional();

/**
 * Client metadata as we accept it, from dynamic registration (RFC 7591) or a client-ID metadata document. Only
 * public clients (`token_endpoint_auth_method: none`) with PKCE: a secret handed to every installed copy of an
 * app protects nothing.
 */
export const ClientMetadataInput = z.looseObject({
  redirect_uris: z.array(z.string().max(2000)).min(1).max(MAX_REDIRECT_URIS),
  client_name: z.string().trim().min(1).max(200).optional(),
  client_uri: httpsUrl,
  logo_uri: httpsUrl,
  software_id: z.string().max(200).optional(),
  software_version: z.string().max(100).optional(),
  token_endpoint_auth_method: z.literal('none').optional(),
  grant_types: z
    .array(z.string())
    .refine((g) => g.includes('authorization_code'), 'grant_types must include authorization_code')
    .optional(),
  response_types: z
    .array(z.string())
    .refine((r) => r.length === 1 && r[0] === 'code', 'response_types must be ["code"]')
    .optional(),
});
export type ClientMetadataInput = z.infer<typeof ClientMetadataInput>;

/** Validates metadata and its redirect URIs; returns the fields we keep, or the first problem as a message. */
export function checkClientMetadata(
  raw: unknown,
): { ok: true; metadata: ClientMetadata } | { ok: false; error: string } {
  const parsed = ClientMetadataInput.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue?.path.join('.') || 'metadata'}: ${issue?.message ?? 'invalid'}` };
  }
  const m = parsed.data;
  for (const uri of m.redirect_uris) {
    try {
      assertRegistrableRedirectUri(uri);
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }
  return {
    ok: true,
    metadata: {
      redirect_uris: m.redirect_uris,
      client_name: m.client_name,
      client_uri: m.client_uri,
      logo_uri: m.logo_uri,
      software_id: m.software_id,
      software_version: m.software_version,
    },
  };
}
