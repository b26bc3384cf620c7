/**
 * Version of the gateway↔agent wire protocol. Bump on any incompatible change to `messages.ts`.
 * 2: mutual authentication (the agent's nonce in `auth`, the gateway's `proof` in `welcome`).
 */
export const PROTOCOL_VERSION = 2;

/** Largest frame either side accepts; a bigger one closes the socket (DESIGN §9). */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** Path of the agent WebSocket endpoint on the gateway. */
export const AGENT_WS_PATH = '/agent/v1';
