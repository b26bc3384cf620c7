/**
 * @letkite/gateway — the central server: MCP endpoint, agent hub, store, enrollment and API tokens.
 * `startGateway(config)` is the composition root; `createApp(deps)` builds the HTTP app without listening.
 */
export { createApp } from './app';
export { verificationView } from './audit/audit-routes';
export { auditCsvHeader, auditCsvLine, auditJsonLine, auditRowsOldestFirst, auditView } from './audit/audit-view';
export { pruneByRetention } from './audit/prune-audit';
export { createApiToken } from './auth/create-api-token';
export { parseDuration } from './auth/duration';
export { type DeploymentMode, deploymentMode } from './cluster/cluster-config';
export { GatewayConfig, loadConfig } from './config';
export { installCommand } from './http/install-script';
export { readRecordedPublicUrl } from './http/recorded-public-url';
export { openIdentityStore } from './identity/open-identity-store';
export { createOwnerSetupLink, SETUP_LINK_TTL_MS } from './identity/ops/create-setup-link';
export { createJoinToken, JOIN_TOKEN_TTL_MS } from './machines/create-join-token';
export { RenameMachineInput, renameMachine } from './machines/rename-machine';
export { type RunningGateway, startGateway } from './main';
export { toolGroupNames, toolsForScopeList } from './oauth/scopes';
export { getAccountSettings, updateAccountSettings } from './policies/account-settings';
export { deletePolicy } from './policies/delete-policy';
export { listPolicies } from './policies/list-policies';
export { createPolicy, updatePolicy } from './policies/save-policy';
export { showPolicy } from './policies/show-policy';
export { saveRedactionPatterns } from './policy/redaction-patterns';
export { openPolicyStore } from './store/open-policy-store';
export { openStore } from './store/open-store';
export type { Grant, Store } from './store/types';
export { GATEWAY_VERSION } from './version';
