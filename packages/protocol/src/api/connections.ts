import { z } from 'zod';
import { Id, Timestamp } from './common';
import { endpoint } from './endpoint';
import { AllOrList, GrantPolicy } from './tokens';

/** An AI client connected through OAuth, with what it was granted. */
export const ConnectionView = z.object({
  id: Id,
  user_id: Id,
  user_name: z.string().nullable(),
  client_id: z.string(),
  /** What the client called itself; never verified. */
  client_name: z.string().nullable(),
  redirect_host: z.string(),
  /** Granted tool groups, space-separated (empty: list machines only). */
  scope: z.string(),
  machines: AllOrList,
  policy: GrantPolicy,
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
});
export type ConnectionView = z.infer<typeof ConnectionView>;

export const ConnectionListResponse = z.object({ connections: z.array(ConnectionView) });
export type ConnectionListResponse = z.infer<typeof ConnectionListResponse>;

export const RevokeConnectionResponse = z.object({ revoked: z.literal(true) });

export const connectionEndpoints = {
  list: endpoint({ method: 'GET', path: '/api/connections', response: ConnectionListResponse }),
  revoke: endpoint({ method: 'DELETE', path: '/api/connections/:id', response: RevokeConnectionResponse }),
};
