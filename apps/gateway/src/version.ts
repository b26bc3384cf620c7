/** Reported in /healthz and to MCP clients. */
export const GATEWAY_VERSION = '0.1.0';
