import { parseTomlWith, parseWith } from './config-issues';
import { Policy } from './policy-schema';

/** Parses a policy TOML document. Throws `invalid_params` naming every problem with its line and key path. */
export function parsePolicyToml(text: string): Policy {
  return parseTomlWith(Policy, text, 'policy');
}

/** Validates a decoded policy (JSON from the store or a request context). Throws `invalid_params` like above. */
export function parsePolicy(data: unknown): Policy {
  return parseWith(Policy, data, 'policy');
}
