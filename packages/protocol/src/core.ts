/**
 * The core of @letkite/protocol: what every process speaking the protocol needs (error codes and the one error
 * type, gateway↔agent frames, approval proofs, data frames, `exec`'s schemas, the protocol version), without the
 * schemas of the other agent ops and the MCP tool descriptors (index.ts adds those). The standalone agent bundle
 * resolves `@letkite/protocol` to this module (tools/build/esbuild-plugins.mjs) and loads each other op group from
 * its `@letkite/protocol/ops-*` module on the group's first request, so an idle agent never builds their schemas
 * (issue #13). Pure: zod only, no I/O.
 */

export { type AgentOpShape, type AgentOpSpec, agentOp } from './agent-op';
export type {
  AgentCallOp,
  AgentOp,
  AgentOpParams,
  AgentOpResult,
  AgentStreamOp,
  ParsedAgentOpParams,
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
export { Ipv4Address, MacAddress, NetworkInterfaceReport, NetworkReport, normalizeMac } from './network-report';
export { ExecParams, ExecResult, execOps } from './ops';
export { RelativeTransferPath, TransferEntry, TransferEntryKind, transferEntryKinds } from './transfer-entry';
export { AGENT_WS_PATH, MAX_FRAME_BYTES, PROTOCOL_VERSION } from './version';
