/**
 * @letkite/protocol — the wire contract shared by gateway, agent and CLI: error codes and the one error type,
 * gateway↔agent frames, agent operation parameters, MCP tool descriptors and the protocol version.
 * Pure: zod only, no I/O.
 */

export { agentOpNames, agentOps, isAgentOp } from './agent-ops';
export * from './core';
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
export {
  ClickAction,
  DragAction,
  GuiAction,
  GuiActParams,
  GuiActResult,
  GuiObserveParams,
  GuiObserveResult,
  GuiWindow,
  KeyAction,
  MAX_GUI_ACTIONS,
  MouseButton,
  MoveAction,
  mouseButtons,
  ScrollAction,
  TypeAction,
  WaitAction,
  WindowId,
} from './ops-gui';
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
  SkippedEntry,
  SkipReason,
  STREAM_RECORD_COST,
  skipReasons,
  TRANSFER_CHUNK_BYTES,
  TRANSFER_WINDOW_BYTES,
  TransferReceiveParams,
  TransferSendParams,
  TransferSideResult,
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
  ipv4Broadcast,
  ipv4InSubnet,
  ipv4Network,
  MAGIC_PACKET_BYTES,
  magicPacket,
  WAKE_PORT,
  WakeSendParams,
  WakeSendResult,
  wakeToolNames,
} from './ops-wake';
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
export { guiAct, guiActInput, guiObserve, guiObserveInput, guiObserveOutput, guiTools } from './tools/gui';
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
export {
  MACHINES_LIST_DEFAULT_LIMIT,
  MACHINES_LIST_MAX_LIMIT,
  MachineSummary,
  machinesList,
} from './tools/machines-list';
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
export { wakeDevice, wakeDeviceInput, wakeNode, wakeNodeInput, wakeTools } from './tools/wake';
