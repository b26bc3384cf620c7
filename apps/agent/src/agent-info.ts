import { arch, hostname, platform, release } from 'node:os';
import { type AgentInfo, PROTOCOL_VERSION } from '@letkite/protocol';
import { networkReport } from './ops/wake-network';

export const AGENT_VERSION = '0.1.0';

export function agentInfo(): AgentInfo {
  return {
    hostname: hostname().slice(0, 255),
    os: platform(),
    os_release: release().slice(0, 255),
    arch: arch(),
    version: AGENT_VERSION,
    protocol: PROTOCOL_VERSION,
    // For Wake-on-LAN: which networks this machine is on, so another machine there can wake it later.
    network: networkReport(),
  };
}
