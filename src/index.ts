/**
 * effect-agent-dsl: a typed agent DSL for TypeScript on Effect.
 *
 * Describe agents with `agent(...)`, `tool(...)` and `skill(...)`; run them with `.run(...)` (Promise)
 * or `.runEffect(...)` (Effect) over any `ModelClient`.
 */
export { agent } from "./dsl/agent.ts"
export type { AgentBuilder, AgentOptions, ToolNames } from "./dsl/agent.ts"
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
export type { AnySkill, Skill, SkillContext, SkillImplementation, SkillPredicate } from "./dsl/skill.ts"
export type { AnyToolHandle, ToolHandle, ToolHandles } from "./dsl/tool-handle.ts"
export { isTool, tool, unsafeNoSchema } from "./dsl/tool.ts"
export { compileJsonSchema } from "./dsl/json-schema-tool.ts"
export type { JsonSchemaContract, ToolJsonSchema } from "./dsl/json-schema-tool.ts"
export { latentTool } from "./dsl/latent-tool.ts"
export type { LatentCall, LatentToolOptions } from "./dsl/latent-tool.ts"
export type { AnyTool, JsonSchemaToolOptions, SchemaToolOptions, Tool, ToolContext, UnsafeMode, UnsafeNoSchema, UnsafeToolOptions } from "./dsl/tool.ts"
export type { AgentTypeError } from "./dsl/agent-type-error.ts"
export {
  AgentConfigError,
  BudgetExceeded,
  Escalated,
  ExceptionThrown,
  InputInvalid,
  InvalidToolArgs,
  isAgentError,
  McpError,
  ModelError,
  NoSkillMatched,
  OutputInvalid,
  SkillRoutingFailed,
  ToolFailed,
  ToolNotAllowed
} from "./errors.ts"
export type { AgentError, BudgetReason } from "./errors.ts"
export { text, toolCalls } from "./providers/messages.ts"
export type {
  JsonSchemaObject,
  LlmMessage,
  LlmResponse,
  ModelRequest,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  Usage
} from "./providers/messages.ts"
export { fromEnv } from "./providers/from-env.ts"
export { jsonMode } from "./providers/json-mode.ts"
export type { JsonModeOptions } from "./providers/json-mode.ts"
export type { EnvModel } from "./providers/from-env.ts"
export { ModelClient, ModelClientService } from "./providers/model-client.ts"
export type { ModelFunction } from "./providers/model-client.ts"
export { ollama } from "./providers/ollama.ts"
export type { OllamaOptions } from "./providers/ollama.ts"
export { openai } from "./providers/openai.ts"
export type { OpenAiOptions } from "./providers/openai.ts"
export type { ResilienceOptions, RetryOptions } from "./providers/resilience.ts"
export { fileKnowledge } from "./runtime/file-knowledge.ts"
export { jsonlTrace } from "./runtime/jsonl-trace.ts"
export type { TraceSink } from "./runtime/jsonl-trace.ts"
export { renderTrace } from "./runtime/render-trace.ts"
export { traceLine } from "./runtime/trace-line.ts"
export type { TraceLine } from "./runtime/trace-line.ts"
export { keywordScorer, pickTools } from "./runtime/pick-tools.ts"
export type { PickedTool, PickToolsOptions, ToolScore, ToolScorer } from "./runtime/pick-tools.ts"
export { closestLiteral } from "./runtime/repair-arguments.ts"
export type { ArgsCorrection, RepairOptions } from "./runtime/repair-arguments.ts"
export { runAgent } from "./runtime/run-agent.ts"
