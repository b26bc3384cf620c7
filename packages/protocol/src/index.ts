/**
 * @letkite/protocol — the wire contract shared by gateway, agent and CLI: error codes and the one error type,
 * gateway↔agent frames, agent operation parameters, MCP tool descriptors and the protocol version.
 * Pure: zod only, no I/O.
 */
export {
  type AgentCallOp,
  type AgentOp,
  type AgentOpParams,
  type AgentOpResult,
  type AgentOpShape,
  type AgentOpSpec,
  type AgentStreamOp,
  agentOpNames,
  agentOps,
  isAgentOp,
  type ParsedAgentOpParams,
} from './agent-ops';
export {
  ApprovalAssertion,
  ApprovalBinding,
  ApprovalProof,
  ApprovalTarget,
  approvalBinding,
  approvalChallenge,
  base64url,
  canonicalJson,
  MAX_APPROVAL_TARGETS,
  policySha256,
  requestSha256,
  sha256,
  sha256Hex,
} from './approval-proof';
export {
  DATA_FRAGMENT_BYTES,
  DATA_FRAME_HEADER_BYTES,
  DATA_FRAME_KIND,
  dataFrameFragments,
  decodeDataFragments,
  decodeDataFrame,
  encodeDataFrame,
  MAX_DATA_PAYLOAD_BYTES,
  writeDataFrameHeader,
} from './data-frame';
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
  agentAuthText,
  CancelFrame,
  ChallengeFrame,
  ChunkFrame,
  CreditFrame,
  EnrollRequest,
  EnrollResponse,
  EntryEndFrame,
  EntryFrame,
  ErrorFrame,
  GatewayFrame,
  gatewayProofText,
  type HandshakeTranscript,
  ReportFrame,
  RequestContext,
  RequestFrame,
  ResponseFrame,
  StreamEndFrame,
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
  MAX_READ_MARGIN_BYTES,
  ReadFileParams,
  ReadFileResult,
  ReadFileWindowParams,
  ReadFileWindowResult,
  WriteFileParams,
  WriteFileResult,
} from './ops-files';
export { JobInfo, JobOutputParams, JobOutputResult, JobRef, JobStartParams, JobState, jobStates } from './ops-jobs';
export { HandleId, ShellRunParams, ShellRunResult } from './ops-shell';
export {
  PasteMode,
  pasteModes,
  TerminalCloseResult,
  TerminalInfo,
  TerminalOpenParams,
  TerminalReadParams,
  TerminalReadResult,
  TerminalRef,
  TerminalSendParams,
  TerminalSendResult,
  TerminalTextParams,
  TerminalTextResult,
  terminalReadModes,
  terminalWaitScopes,
} from './ops-terminals';
export {
  MAX_TRANSFER_ENTRIES,
  RelativeTransferPath,
  SkippedEntry,
  SkipReason,
  STREAM_RECORD_COST,
  skipReasons,
  TRANSFER_CHUNK_BYTES,
  TRANSFER_WINDOW_BYTES,
  TransferEntry,
  TransferEntryKind,
  TransferReceiveParams,
  TransferSendParams,
  TransferSideResult,
  transferEntryKinds,
} from './ops-transfer';
export {
  MAX_TUNNEL_WINDOW_BYTES,
  splitTunnelTarget,
  TUNNEL_CHUNK_BYTES,
  TUNNEL_WINDOW_BYTES,
  TunnelConnectParams,
  TunnelConnectResult,
  TunnelKind,
  tunnelKinds,
} from './ops-tunnel';
export {
  APPROVAL_WAIT_MAX_S,
  ApprovalWaitStatus,
  approvalWait,
  approvalWaitInput,
  approvalWaitOutput,
  approvalWaitStatuses,
} from './tools/approval-wait';
export { MachineRef, PendingApproval } from './tools/common';
export { exec, execInput, execOutput } from './tools/exec';
export { execMany, execManyInput, execManyOutput } from './tools/exec-many';
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
export {
  jobOutput,
  jobOutputInput,
  jobStart,
  jobStartInput,
  jobStatus,
  jobStatusInput,
  jobStop,
  jobStopInput,
  jobTools,
} from './tools/jobs';
export { MachineSummary, machinesList } from './tools/machines-list';
export { shellRun, shellRunInput, shellRunOutput } from './tools/shell-run';
export {
  terminalClose,
  terminalCloseInput,
  terminalOpen,
  terminalOpenInput,
  terminalRead,
  terminalReadInput,
  terminalSend,
  terminalSendInput,
  terminalTools,
  terminalWait,
  terminalWaitInput,
} from './tools/terminals';
export {
  copyBetweenHosts,
  copyBetweenHostsInput,
  copyBetweenHostsOutput,
  TransferState,
  transferStart,
  transferStates,
  transferStatus,
  transferTools,
} from './tools/transfers';
export {
  DEFAULT_TUNNEL_TTL_S,
  MAX_TUNNEL_TTL_S,
  TunnelInfo,
  tunnelClose,
  tunnelOpen,
  tunnelOpenInput,
  tunnelsList,
  tunnelTools,
} from './tools/tunnels';
export { AGENT_WS_PATH, MAX_FRAME_BYTES, PROTOCOL_VERSION } from './version';
