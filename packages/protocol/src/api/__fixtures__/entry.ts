// A fixture for guard.test.ts: not part of the api subpath.

export { toolNames } from '@letkite/policy';
export { deep } from './deep';
