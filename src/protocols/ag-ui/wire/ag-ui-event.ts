/**
 * The AG-UI 1.0 events this package emits, as plain types (the wire shapes `@ag-ui/core` validates;
 * no import of it, so a server needs no AG-UI package at run time). Only the events a run maps to are
 * listed; the test suite checks each against `@ag-ui/core`'s own schemas and types.
 */

/**
 * An interrupt: what a suspended run needs answered before it goes on. Two reasons:
 * - `tool_call` (AG-UI's core reason): a call waiting for a decision, because its tool's
 *   `needsApproval` asked (`metadata.kind: "approval"`) or an interceptor suspended it
 *   (`metadata.kind: "suspended"`, `message` says why); `toolCallId` names the call,
 *   `metadata.tool` and `metadata.args` say what would run, and `responseSchema` is
 *   `approvalAnswerSchema` (`{ approved, editedArgs?, reason? }`); `subagentRunId` names the child
 *   agent's run when an agent used as a tool waits;
 * - `effect-agent-dsl:client_tool`: a call of a client tool, named so only when `tool_call`
 *   interrupts wait too; answered by its result as a tool message (and this interrupt resolved) or
 *   refused by cancelling it.
 *
 * @example
 * ```ts
 * const interrupt: AgUiInterrupt = { id: "run-1:pay-1", reason: "tool_call", toolCallId: "pay-1", metadata: { kind: "approval", tool: "transfer", args: { to: "bob" } } }
 * ```
 */
export interface AgUiInterrupt {
  /** Answered by a resume entry with this `interruptId`: `<run id>:<decision key>`. */
  readonly id: string
  /** `tool_call`, or `effect-agent-dsl:client_tool` (a client tool's call, named so when `tool_call` interrupts wait too). */
  readonly reason: string
  readonly message?: string
  readonly toolCallId?: string
  /** The JSON Schema of the answer expected in the resume entry's `payload`. */
  readonly responseSchema?: Record<string, unknown>
  /** The run of the child agent (an agent used as a tool) whose call this is; absent for the run's own calls. */
  readonly subagentRunId?: string
  readonly metadata?: Record<string, unknown>
}

/** How a run that did not fail finished. */
export type AgUiRunOutcome =
  | { readonly type: "success"; readonly pendingToolCallIds?: ReadonlyArray<string> }
  | { readonly type: "interrupt"; readonly interrupts: ReadonlyArray<AgUiInterrupt> }
  | { readonly type: "cancelled" }

/** A message as AG-UI carries it in `MESSAGES_SNAPSHOT` and `RunAgentInput.messages` (the roles a run produces). */
export type AgUiMessage =
  | { readonly id: string; readonly role: "user"; readonly content: string }
  | {
    readonly id: string
    readonly role: "assistant"
    readonly content?: string
    readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly type: "function"; readonly function: { readonly name: string; readonly arguments: string } }>
  }
  | { readonly id: string; readonly role: "tool"; readonly toolCallId: string; readonly content: string }

/** A message as a client sent it in `RunAgentInput.messages` (any role; kept as sent in a `MESSAGES_SNAPSHOT`). */
export interface AgUiInputMessage {
  readonly id: string
  readonly role: string
  readonly [key: string]: unknown
}

/** One operation of an RFC 6902 JSON Patch, as `STATE_DELTA` carries them. */
export type JsonPatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly path: string; readonly from: string }

/**
 * One AG-UI event of a run, discriminated by `type`.
 *
 * @example
 * ```ts
 * const start: AgUiEvent = { type: "RUN_STARTED", threadId: "t1", runId: "r1" }
 * ```
 */
export type AgUiEvent =
  | { readonly type: "RUN_STARTED"; readonly threadId: string; readonly runId: string }
  | {
    readonly type: "RUN_FINISHED"
    readonly threadId: string
    readonly runId: string
    /** The output as JSON; never `null` (AG-UI refuses it): an output of `null` is `metadata: { result: null }`. */
    readonly result?: unknown
    readonly metadata?: { readonly result: null }
    readonly outcome: AgUiRunOutcome
  }
  | { readonly type: "RUN_ERROR"; readonly message: string; readonly code?: string }
  | { readonly type: "STEP_STARTED"; readonly stepName: string }
  | { readonly type: "STEP_FINISHED"; readonly stepName: string }
  | { readonly type: "TEXT_MESSAGE_START"; readonly messageId: string; readonly role: "assistant" }
  | { readonly type: "TEXT_MESSAGE_CONTENT"; readonly messageId: string; readonly delta: string }
  | { readonly type: "TEXT_MESSAGE_END"; readonly messageId: string }
  | { readonly type: "REASONING_START"; readonly messageId: string }
  | { readonly type: "REASONING_MESSAGE_START"; readonly messageId: string; readonly role: "reasoning" }
  | { readonly type: "REASONING_MESSAGE_CONTENT"; readonly messageId: string; readonly delta: string }
  | { readonly type: "REASONING_MESSAGE_END"; readonly messageId: string }
  | { readonly type: "REASONING_END"; readonly messageId: string }
  | { readonly type: "TOOL_CALL_START"; readonly toolCallId: string; readonly toolCallName: string; readonly parentMessageId?: string }
  | { readonly type: "TOOL_CALL_ARGS"; readonly toolCallId: string; readonly delta: string }
  | { readonly type: "TOOL_CALL_END"; readonly toolCallId: string }
  | { readonly type: "TOOL_CALL_RESULT"; readonly messageId: string; readonly toolCallId: string; readonly content: string; readonly role: "tool" }
  | { readonly type: "MESSAGES_SNAPSHOT"; readonly messages: ReadonlyArray<AgUiMessage | AgUiInputMessage> }
  | { readonly type: "STATE_SNAPSHOT"; readonly snapshot: unknown }
  | { readonly type: "STATE_DELTA"; readonly delta: ReadonlyArray<JsonPatchOperation> }
  | { readonly type: "CUSTOM"; readonly name: string; readonly value: unknown }

/** The `type` of an AG-UI event. */
export type AgUiEventType = AgUiEvent["type"]
