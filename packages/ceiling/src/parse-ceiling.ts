import { parseTomlWith, parseWith } from '@letkite/policy';
import { Ceiling } from './ceiling-schema';

/** Parses ceiling.toml. Throws `invalid_params` naming every problem with its line and key (`details.issues`). */
export function parseCeilingToml(text: string): Ceiling {
  return parseTomlWith(Ceiling, text, 'ceiling');
}

/** Validates a decoded ceiling (e.g. the one an agent reported to the gateway). Errors as above, without lines. */
export function parseCeiling(data: unknown): Ceiling {
  return parseWith(Ceiling, data, 'ceiling');
}
