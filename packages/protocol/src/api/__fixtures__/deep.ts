// A fixture for guard.test.ts: a file two steps away that is not browser-safe.
import { randomBytes } from 'node:crypto';

export const deep = () => Buffer.from(randomBytes(4)).toString('hex');
