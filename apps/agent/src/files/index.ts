/**
 * The agent's file operations (DESIGN §7 files group): one async function per operation, each taking its
 * parameters (re-validated here) and the request's FileAccess, and answering the protocol's result or throwing a
 * LetKiteError with a stable code. See README.md for the rules they keep.
 */
export { deletePath, maxDeleteEntries } from './delete-path';
export { gitDiff, maxDiffFiles } from './git-diff';
export { gitStatus, maxStatusEntries, parsePorcelainV2 } from './git-status';
export { globMatcher, listDir, maxListEntries } from './list-dir';
export { readFile } from './read-file';
export { type AccessLevel, accessOf, type FileAccess, notFound } from './resolve-path';
export { writeFile } from './write-file';
