import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { type NetworkReport, normalizeMac } from '@letkite/protocol';

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * The machine's interfaces as the agent reports them for Wake-on-LAN: every interface with a real MAC (not
 * loopback, not all zeros) and its IPv4 addresses with their prefix lengths. Read on every connect, so a moved
 * laptop reports its new network.
 */
export function networkReport(interfaces: Interfaces = networkInterfaces()): NetworkReport {
  const report: NetworkReport = [];
  for (const [name, addresses] of Object.entries(interfaces)) {
    if (!addresses || name.length > 64) continue;
    const mac = addresses.find((a) => !a.internal && a.mac && !/^(00:){5}00$/.test(a.mac))?.mac;
    if (!mac) continue;
    const ipv4 = addresses
      .filter((a) => a.family === 'IPv4' && !a.internal && a.cidr)
      .map((a) => ({ address: a.address, prefix: Number(a.cidr?.split('/')[1]) }))
      .filter((a) => Number.isInteger(a.prefix) && a.prefix >= 0 && a.prefix <= 32)
      .slice(0, 16);
    report.push({ name, mac: normalizeMac(mac), ipv4 });
    if (report.length === 64) break;
  }
  return report;
}
