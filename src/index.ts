/**
 * effect-agent-dsl: a typed agent DSL for TypeScript on Effect.
 *
 * Describe agents with `agent(...)`, `tool(...)` and `skill(...)`; run them with `.run(...)` (Promise)
 * or `.runEffect(...)` (Effect) over any `ModelClient`.
 *
 * @module effect-agent-dsl
 */
export { agent, resume, runUntil, session } from "./agent.ts"
export type { Session } from "./agent.ts"
export type { SessionOptions } from "./runtime/session.ts"
export { inMemorySessionStore } from "./dsl/session-store.ts"
export type { SessionStore, WaitingRun } from "./dsl/session-store.ts"
export { applyWindow } from "./dsl/context-window.ts"
export type { ContextWindow } from "./dsl/context-window.ts"
export type { RunResult } from "./runtime/run-agent.ts"
export { decodeSnapshot, decodeSnapshotValue, encodeSnapshot, RunSnapshotSchema } from "./runtime/snapshot.ts"
export { signSnapshot } from "./runtime/snapshot-signature.ts"
export { inMemoryResumeLedger, ResumeLedger, resumeKey } from "./runtime/resume-ledger.ts"
export type { ResumeLedgerStore } from "./runtime/resume-ledger.ts"
export { Decision } from "./dsl/decision.ts"
export { BudgetPolicy } from "./dsl/budget-policy.ts"
export type { BudgetDecision, BudgetLimitContext, BudgetLimitPolicy } from "./dsl/budget-policy.ts"
export { Intercept } from "./dsl/interceptor.ts"
export type { InterceptContext, Interception, InterceptionOf, Interceptor } from "./dsl/interceptor.ts"
export type { Decisions } from "./dsl/decision.ts"
export type { Completed, MayNeedApproval, PendingApproval, RunResultOf, Suspended } from "./dsl/run-outcome.ts"
export type { RunSnapshot } from "./runtime/snapshot.ts"
export type { AgentBuilder, AgentFactory, AgentOptions, AgentShape, NewAgent, RunEffect, RunMethod, RunPromise, ToolNames } from "./dsl/agent.ts"
export type { AsToolArgs, AsToolOptions } from "./dsl/agent-as-tool.ts"
export type { AgentDefinition, SkillDefinition } from "./dsl/agent-definition.ts"
export { builtinTools, escalateTool, throwExceptionTool } from "./dsl/builtin-tools.ts"
export type { BuiltinTools } from "./dsl/builtin-tools.ts"
export { defaultBudget } from "./dsl/budget.ts"
export type { Budget, BudgetOptions } from "./dsl/budget.ts"
export type {
  AgentEvent,
  ArgsRepairedEvent,
  BudgetExceededEvent,
  BudgetThresholdEvent,
  HookFailedEvent,
  InvalidArgsEvent,
  KnowledgeUsedEvent,
  ApprovalDecidedEvent,
  ApprovalRequestedEvent,
  HandoffEvent,
  WaitingCall,
  Listener,
  ModelCallEvent,
  ModelResponseEvent,
  RetryingEvent,
  RunEndEvent,
  RunStartEvent,
  SkillChosenEvent,
  ToolErrorEvent,
  ToolHallucinatedEvent,
  ToolUseEvent,
  ToolProgressEvent,
  TurnEvent
} from "./dsl/events.ts"
export type { KnowledgeLoader, KnowledgeSource } from "./dsl/knowledge.ts"
export { inMemoryStore, memoryToolNames } from "./dsl/memory.ts"
export type { MemoryEntry, MemoryStore } from "./dsl/memory.ts"
export { Recovery } from "./dsl/recovery.ts"
export type {
  ErrorPolicy,
  ExecutionErrorContext,
  InvalidArgsContext,
  RecoveryDecision,
  RecoveryHandlers,
  Severity
} from "./dsl/recovery.ts"
export { isSkill, skill } from "./dsl/skill.ts"
export type { AnySkill, Skill, SkillContext, SkillImplementation, SkillPredicate, SkillRequirements } from "./dsl/skill.ts"
export type { ToolByName, ToolChoicePolicy, ToolChoiceSetting } from "./dsl/tool-choice.ts"
export type { AnyToolHandle, ToolHandle, ToolHandles } from "./dsl/tool-handle.ts"
export { isTool, tool, unsafeNoSchema } from "./dsl/tool.ts"
export { toolLayer } from "./dsl/tool-implementation.ts"
export type { ToolHandler, ToolImplementation } from "./dsl/tool-implementation.ts"
export type { ArgsCodec, ArgsDecoding } from "./dsl/tool-codec.ts"
export type {
  AnyTool,
  ApprovalContext,
  DeclaredToolOptions,
  JsonSchemaToolOptions,
  NeedsApproval,
  SchemaToolOptions,
  Tool,
  ToolContext,
  ToolEffectClass,
  UnsafeMode,
  UnsafeNoSchema,
  UnsafeToolOptions,
  WithApproval,
  WithoutApproval
} from "./dsl/tool.ts"
export { compileJsonSchema } from "./dsl/json-schema-tool.ts"
export type { JsonSchemaContract, ToolJsonSchema } from "./dsl/json-schema-tool.ts"
export { latentTool } from "./dsl/latent-tool.ts"
export type { LatentCall, LatentToolOptions } from "./dsl/latent-tool.ts"
export type { AgentTypeError } from "./dsl/agent-type-error.ts"
export {
  AgentConfigError,
  BudgetExceeded,
  DecisionsInvalid,
  DefinitionChanged,
  Escalated,
  ExceptionThrown,
  InputInvalid,
  InvalidToolArgs,
  isAgentError,
  isRetryable,
  McpError,
  NoSkillMatched,
  OutcomeUnknown,
  Cancelled,
  OutputInvalid,
  RuntimeDefect,
  SkillFailed,
  SnapshotInvalid,
  SnapshotRejected,
  SnapshotAlreadyResumed,
  ResumeLedgerFailed,
  SessionStoreFailed,
  SkillRoutingFailed,
  ToolFailed,
  ToolNotAllowed
} from "./errors.ts"
export { ModelError } from "./model/model-error.ts"
export type { ModelErrorKind } from "./model/model-error.ts"
export type { AgentError, BudgetReason } from "./errors.ts"
export { text, toolCalls } from "./model/messages.ts"
export type {
  FinishReason,
  JsonSchemaObject,
  LlmMessage,
  LlmResponse,
  LlmResponseInit,
  ModelRequest,
  ReasoningPart,
  ResponseFormat,
  ResponseInfo,
  ToolCall,
  ToolCallInit,
  ToolChoice,
  ToolDefinition,
  Usage
} from "./model/messages.ts"
export { fromEnv, fromEnvLayer } from "./providers/from-env.ts"
export {
  aiSdkLayer,
  anthropicLayer,
  anthropicLayerConfig,
  ollamaLayer,
  ollamaLayerConfig,
  openaiLayer,
  openaiLayerConfig,
  openaiResponsesLayer,
  openaiResponsesLayerConfig,
  geminiLayer,
  geminiLayerConfig
} from "./providers/layers.ts"
export type {
  AnthropicSettingsConfig,
  GeminiSettingsConfig,
  ModelSettingsConfig,
  OllamaSettingsConfig,
  OpenAiSettingsConfig,
  SettingConfig
} from "./providers/layers.ts"
export { jsonMode } from "./providers/json-mode.ts"
export type { JsonModeOptions } from "./providers/json-mode.ts"
export type { EnvModel } from "./providers/from-env.ts"
export { ModelClient, ModelClientService } from "./model/model-client.ts"
export type { ModelMetadata } from "./model/model-client.ts"
export { CaptureMessageContent } from "./runtime/gen-ai-content.ts"
export {
  operationDuration as genAiOperationDuration,
  timePerOutputChunk as genAiTimePerOutputChunk,
  timeToFirstChunk as genAiTimeToFirstChunk,
  tokenUsage as genAiTokenUsage
} from "./runtime/gen-ai-metrics.ts"
export { ModelErrorPolicy, withModelErrorPolicy } from "./model/model-error-policy.ts"
export type { ModelFunction } from "./model/model-client.ts"
export { announceRetry, ModelRetryListener, retryLine } from "./model/model-retry.ts"
export type { RetryListener, RetryNotice } from "./model/model-retry.ts"
export { fromAiSdk } from "./providers/ai-sdk.ts"
export type { AiSdkOptions } from "./providers/ai-sdk.ts"
export { anthropic } from "./providers/anthropic.ts"
export type { AnthropicOptions } from "./providers/anthropic.ts"
export { ollama } from "./providers/ollama.ts"
export type { OllamaOptions } from "./providers/ollama.ts"
export { openai } from "./providers/openai.ts"
export type { OpenAiOptions } from "./providers/openai.ts"
export { openaiResponses } from "./providers/openai-responses.ts"
export type { OpenAiResponsesOptions } from "./providers/openai-responses.ts"
export { gemini } from "./providers/gemini.ts"
export type { GeminiOptions } from "./providers/gemini.ts"
export { retryAdvice } from "./providers/resilience.ts"
export type { ResilienceOptions, RetryAdvice, RetryOptions } from "./providers/resilience.ts"
export { fileKnowledge } from "./node/file-knowledge.ts"
export { jsonlTrace } from "./trace/jsonl-trace.ts"
export type { TraceSink } from "./trace/jsonl-trace.ts"
export { renderTrace } from "./trace/render-trace.ts"
export { traceLine } from "./trace/trace-line.ts"
export type { TraceLine } from "./trace/trace-line.ts"
export { keywordScorer, pickTools } from "./dsl/pick-tools.ts"
export type { PickedTool, PickToolsOptions, ToolScore, ToolScorer } from "./dsl/pick-tools.ts"
export { closestLiteral } from "./dsl/repair-arguments.ts"
export type { ArgsCorrection, RepairOptions } from "./dsl/repair-arguments.ts"
export { outputStrategy, outputToolName } from "./runtime/output-contract.ts"
export type { OutputStrategy } from "./runtime/output-contract.ts"
export {
  branch,
  BranchNotRouted,
  CompositeSnapshotSchema,
  forum,
  isRunnable,
  loop,
  LoopLimitExceeded,
  parallel,
  ParentRun,
  pipeline,
  renderBrief,
  StepFailed
} from "./compose/index.ts"
export type {
  AnyComposite,
  BranchCases,
  Composite,
  CompositeEnd,
  CompositeBudget,
  CompositeHookFailed,
  CompositeSnapshot,
  CompositeSuspended,
  CompositeKind,
  CompositeStart,
  CompositeStreamEvent,
  CompositionError,
  ForumBrief,
  InputOf,
  LoopOptions,
  OutputOf,
  ParallelOptions,
  Runnable,
  Settled
} from "./compose/index.ts"

// Streaming: response parts, run events with deltas, Server-Sent Events.
export type {
  DeltaEvent,
  ReasoningDeltaEvent,
  RunStreamEvent,
  TextDeltaEvent,
  ToolCallDeltaEvent,
  ToolCallStartEvent
} from "./dsl/events.ts"
export { chunksOf, PartsAssembler, partsOf } from "./model/response-part.ts"
export type { Chunker, ResponsePart } from "./model/response-part.ts"
export { eventStreamResponse } from "./runtime/event-stream-response.ts"
export type { EventStreamOptions } from "./runtime/event-stream-response.ts"
export { sendResponse } from "./node/send-response.ts"
// useChat bodies, chat endpoints and edge runtimes live in `effect-agent-dsl/web`; the Node adapter is here too.
export { nodeHandler, toWebRequest } from "./node/node-handler.ts"
export type { NodeRequest } from "./node/node-handler.ts"
