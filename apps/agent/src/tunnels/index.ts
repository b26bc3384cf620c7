/**
 * The agent's side of tunnels (DESIGN §7 tunnels group): `tunnel_connect` carries one TCP connection to a target
 * the ceiling and the request's policy both allow. The stream and its flow control are described in
 * `@letkite/protocol` (ops-tunnel.ts).
 */
export { type TunnelSide, tunnelConnect } from './connect';
export { pickTunnelAddress, type ResolveHost, type TunnelLists } from './target-check';
