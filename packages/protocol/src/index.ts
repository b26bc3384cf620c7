/**
 * @letkite/protocol — the wire contract shared by gateway, agent and CLI: error codes and the one error type,
 * gateway↔agent frames, agent operation parameters, MCP tool descriptors and the protocol version.
 * Pure: zod only, no I/O.
 */
export { defineTool, type ToolAnnotations, type ToolDescriptor } from './define-tool';
export {
  ErrorCode,
  ErrorPayload,
  errorCodes,
  isLetKiteError,
  LetKiteError,
  toLetKiteError,
} from './errors';
export {
  AgentFrame,
  AgentInfo,
  AuthFrame,
  CancelFrame,
  ChallengeFrame,
  ChunkFrame,
  CreditFrame,
  challengeText,
  EnrollRequest,
  EnrollResponse,
  ErrorFrame,
  GatewayFrame,
  ReportFrame,
  RequestContext,
  RequestFrame,
  ResponseFrame,
  WelcomeFrame,
} from './messages';
export { ExecParams, ExecResult } from './ops';
export {
  AbsolutePath,
  DeletePathParams,
  DeletePathResult,
  DirEntry,
  DirentType,
  direntTypes,
  FileEncoding,
  FileMode,
  fileEncodings,
  fileModeBits,
  GitDiffParams,
  GitDiffResult,
  GitStatusCode,
  GitStatusEntry,
  GitStatusParams,
  GitStatusResult,
  gitStatusCodes,
  ListDirParams,
  ListDirResult,
  ReadFileParams,
  ReadFileResult,
  WriteFileParams,
  WriteFileResult,
} from './ops-files';
export { MachineRef, PendingApproval } from './tools/common';
export { exec, execInput, execOutput } from './tools/exec';
export {
  deletePath,
  deletePathInput,
  fileTools,
  gitDiff,
  gitDiffInput,
  gitStatus,
  gitStatusInput,
  listDir,
  listDirInput,
  readFile,
  readFileInput,
  writeFile,
  writeFileInput,
} from './tools/files';
export { MachineSummary, machinesList } from './tools/machines-list';
export { AGENT_WS_PATH, MAX_FRAME_BYTES, PROTOCOL_VERSION } from './version';
