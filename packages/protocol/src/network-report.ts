import { z } from 'zod';

/**
 * What an agent reports of its network interfaces on every connect (its info, messages.ts), so the gateway knows
 * which awake machine shares a network with a sleeping one (ops-wake.ts). Apart from the wake op's module because
 * every agent sends it: an agent that never wakes anything does not build the wake schemas (issue #13).
 */

const MAC_RE = /^[0-9a-f]{2}([:-]?)[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}$/i;
const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** A MAC address as `aa:bb:cc:dd:ee:ff`, `AA-BB-…` or `aabbccddeeff`; normalized to lowercase with colons. */
export const MacAddress = z
  .string()
  .regex(MAC_RE, 'a MAC address such as "52:54:00:12:34:56"')
  .transform((mac) => normalizeMac(mac));

/** A dotted-quad IPv4 address. */
export const Ipv4Address = z.string().regex(IPV4_RE, 'a dotted IPv4 address such as "192.168.1.255"');

/** One interface as the agent reports it: the name, the MAC and its IPv4 addresses with their prefix lengths. */
export const NetworkInterfaceReport = z.object({
  name: z.string().min(1).max(64),
  mac: MacAddress,
  ipv4: z.array(z.object({ address: Ipv4Address, prefix: z.number().int().min(0).max(32) })).max(16),
});
export type NetworkInterfaceReport = z.infer<typeof NetworkInterfaceReport>;

/** Every non-loopback interface with a MAC, as reported in the agent's info (at most 64). */
export const NetworkReport = z.array(NetworkInterfaceReport).max(64);
export type NetworkReport = z.infer<typeof NetworkReport>;

/** `aa:bb:cc:dd:ee:ff` from any accepted spelling. */
export function normalizeMac(mac: string): string {
  const hex = mac.toLowerCase().replace(/[^0-9a-f]/g, '');
  return hex.match(/../g)?.join(':') ?? hex;
}
