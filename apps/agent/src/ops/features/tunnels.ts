import { tunnelOps } from '@letkite/protocol/ops-tunnel';
import { tunnelConnect } from '../../tunnels';
import type { Feature } from '../feature';

/** One TCP connection of a tunnel, carried over the agent's socket. */
export function tunnelsFeature(): Feature<'tunnel_connect'> {
  return {
    schemas: tunnelOps,
    handlers: {
      tunnel_connect: (r) =>
        tunnelConnect(r.params, r.context, r.ceiling, { id: r.id, send: r.send, stream: r.stream, signal: r.signal }),
    },
  };
}
