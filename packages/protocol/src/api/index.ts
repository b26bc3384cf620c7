/**
 * @letkite/protocol/api — the REST API's contracts: one zod schema per request and response of every route the web
 * app uses, and an `Endpoint` (method, path, request, response) per route. The gateway's tests parse every answer
 * with these; the web app's typed client is built from the same objects, so its types are `z.infer` of them.
 *
 * Browser-safe by rule: this subpath imports zod and its own files only, never a `node:` module or `Buffer`
 * (api/guard.test.ts walks the import graph). One file per area; each adds one export line below.
 */

export { ErrorCode, ErrorPayload, errorCodes } from '../errors';
export * from './account-settings';
export * from './approvals';
export * from './audit';
export * from './common';
export * from './connections';
export * from './endpoint';
export * from './machine-list';
export * from './machines';
export * from './members';
export * from './policies';
export * from './roles-groups';
export * from './security';
export * from './session';
export * from './tokens';
