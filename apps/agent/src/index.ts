/**
 * @letkite/agent — the daemon on each machine: dials out to the gateway, runs what it is asked within the
 * machine's ceiling, and answers over one WebSocket.
 */
export { Agent, type AgentOptions, ceilingReport } from './agent';
export { AGENT_VERSION, agentInfo } from './agent-info';
export { CeilingSource, type CeilingState } from './ceiling/ceiling-source';
export { runAsCouldChangeCeiling } from './ceiling/ceiling-trust';
export { writeDefaultCeiling } from './ceiling/write-default-ceiling';
export { backoffDelay, GatewayConnection } from './connection';
export { runExec } from './executors/exec';
export { gatewayKeyFingerprint } from './gateway-trust';
export { checkGatewayUrl } from './gateway-url';
export { commandRulesIdleFromEnv } from './guard/command-rules-idle';
export { type ScreenConfig, screenConfigFromEnv } from './gui/display';
export { joinGateway, prepareRunAsAccount, type RunAsAccount, SYSTEM_RUN_AS } from './join';
export { type AgentState, loadState, saveState } from './state';
