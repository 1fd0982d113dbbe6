/**
 * effect-agent-dsl: a typed agent DSL for TypeScript on Effect.
 *
 * Describe agents with `agent(...)`, `tool(...)` and `skill(...)`; run them with `.run(...)` (Promise)
 * or `.runEffect(...)` (Effect) over any `ModelClient`.
 */
export { agent, resume, runUntil } from "./agent.ts"
export type { RunResult } from "./runtime/run-agent.ts"
export { decodeSnapshot, encodeSnapshot, RunSnapshotSchema } from "./runtime/snapshot.ts"
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
  Listener,
  ModelCallEvent,
  ModelResponseEvent,
  RunEndEvent,
  RunStartEvent,
  SkillChosenEvent,
  ToolErrorEvent,
  ToolHallucinatedEvent,
  ToolUseEvent,
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
export type { AnyToolHandle, ToolHandle, ToolHandles } from "./dsl/tool-handle.ts"
export { isTool, tool, unsafeNoSchema } from "./dsl/tool.ts"
export { toolLayer } from "./dsl/tool-implementation.ts"
export type { ToolHandler, ToolImplementation } from "./dsl/tool-implementation.ts"
export type { ArgsCodec, ArgsDecoding } from "./dsl/tool-codec.ts"
export type { AnyTool, DeclaredToolOptions, JsonSchemaToolOptions, SchemaToolOptions, Tool, ToolContext, UnsafeMode, UnsafeNoSchema, UnsafeToolOptions } from "./dsl/tool.ts"
export { compileJsonSchema } from "./dsl/json-schema-tool.ts"
export type { JsonSchemaContract, ToolJsonSchema } from "./dsl/json-schema-tool.ts"
export { latentTool } from "./dsl/latent-tool.ts"
export type { LatentCall, LatentToolOptions } from "./dsl/latent-tool.ts"
export type { AgentTypeError } from "./dsl/agent-type-error.ts"
export {
  AgentConfigError,
  BudgetExceeded,
  DefinitionChanged,
  Escalated,
  ExceptionThrown,
  InputInvalid,
  InvalidToolArgs,
  isAgentError,
  isRetryable,
  McpError,
  NoSkillMatched,
  OutputInvalid,
  RuntimeDefect,
  SkillFailed,
  SnapshotInvalid,
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
  openaiLayerConfig
} from "./providers/layers.ts"
export type {
  AnthropicSettingsConfig,
  ModelSettingsConfig,
  OllamaSettingsConfig,
  OpenAiSettingsConfig,
  SettingConfig
} from "./providers/layers.ts"
export { jsonMode } from "./providers/json-mode.ts"
export type { JsonModeOptions } from "./providers/json-mode.ts"
export type { EnvModel } from "./providers/from-env.ts"
export { ModelClient, ModelClientService } from "./model/model-client.ts"
export type { ModelFunction } from "./model/model-client.ts"
export { fromAiSdk } from "./providers/ai-sdk.ts"
export type { AiSdkOptions } from "./providers/ai-sdk.ts"
export { anthropic } from "./providers/anthropic.ts"
export type { AnthropicOptions } from "./providers/anthropic.ts"
export { ollama } from "./providers/ollama.ts"
export type { OllamaOptions } from "./providers/ollama.ts"
export { openai } from "./providers/openai.ts"
export type { OpenAiOptions } from "./providers/openai.ts"
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
export { outputStrategy } from "./runtime/output-contract.ts"
export type { OutputStrategy } from "./runtime/output-contract.ts"
export {
  branch,
  BranchNotRouted,
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
  CompositeKind,
  CompositeStart,
  CompositionError,
  ForumBrief,
  InputOf,
  LoopOptions,
  OutputOf,
  ParallelOptions,
  Runnable,
  Settled
} from "./compose/index.ts"
