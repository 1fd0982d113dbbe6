/**
 * The studio's HTTP API as the browser sees it: the shapes `src/studio/ui/public/*.js` reads, checked
 * by `tsc -p src/studio/ui` (JSDoc `import("../api-types.ts")`). They follow the contract the server
 * implements (`src/studio/server/api.ts`); the run events are the library's own (`src/dsl/events.ts`).
 *
 * @example
 * ```ts
 * import type { RunSummary } from "./api-types.ts"
 * const failed = (runs: ReadonlyArray<RunSummary>) => runs.filter((run) => run.status === "failed")
 * ```
 */
import type { RunStreamEvent } from "../../dsl/events.ts"

/** How a tool's calls may change the world. */
export type EffectClass = "readOnly" | "idempotent" | "mutating"
/** A JSON Schema document, as the server sends it (draft 2020-12). */
export type JsonSchema = { readonly [key: string]: unknown }

/** A tool an exported agent may call. */
export interface ToolInfo {
  readonly name: string
  readonly description?: string | undefined
  readonly jsonSchema: JsonSchema
  readonly effect: EffectClass
  readonly approval: unknown
}
/** A skill of an exported agent, with the names of the tools it allows. */
export interface SkillInfo {
  readonly name: string
  readonly description?: string | undefined
  readonly tools: ReadonlyArray<string>
}
/** `GET /api/agents`: one exported agent or composite. */
export interface AgentInfo {
  readonly id: string
  readonly name: string
  readonly kind: "agent" | "composite"
  readonly description?: string | undefined
  readonly model?: string | undefined
  readonly budgets?: { readonly [dimension: string]: unknown } | undefined
  readonly skills: ReadonlyArray<SkillInfo>
  readonly tools: ReadonlyArray<ToolInfo>
  readonly inputJsonSchema?: JsonSchema | undefined
}
/** Where the studio learnt about a run. */
export type RunSource = "studio" | "ingest" | "trace" | "durable"
/** A run's state. */
export type RunStatus = "running" | "suspended" | "completed" | "failed" | "cancelled"
/** `GET /api/runs`: one row of the runs list. */
export interface RunSummary {
  readonly runId: string
  readonly agent: string
  readonly status: RunStatus
  readonly source: RunSource
  readonly startedAt: string | number
  readonly endedAt?: string | number | undefined
  readonly durationMs?: number | undefined
  readonly turns: number
  readonly tokens: { readonly input: number; readonly output: number; readonly total: number }
  readonly error?: unknown
  readonly parentRunId?: string | undefined
}
/** One stored event of a run: its id (for `Last-Event-ID`), when it happened and the run event. */
export interface StoredEvent {
  readonly id: string | number
  readonly at: string | number
  readonly event: RunStreamEvent
}
/** A model request and its answer, as the run detail shows them. */
export interface ModelExchange {
  readonly turn: number
  readonly system?: string | undefined
  readonly tools: ReadonlyArray<string>
  readonly messages: ReadonlyArray<unknown>
  readonly response: unknown
  readonly latencyMs?: number | undefined
  readonly usage?: { readonly [key: string]: unknown } | undefined
  readonly finishReason?: string | undefined
}
/** `GET /api/runs/:id`. */
export interface RunDetail {
  readonly summary: RunSummary
  readonly events: ReadonlyArray<StoredEvent>
  readonly children: ReadonlyArray<string>
  readonly budgets: { readonly [dimension: string]: { readonly limit: number; readonly used: number } }
  readonly requests: ReadonlyArray<ModelExchange>
}
/** A call waiting for a decision. */
export interface PendingCall {
  readonly callId: string
  readonly tool: string
  readonly arguments: unknown
  readonly reason?: string | undefined
  readonly jsonSchema?: JsonSchema | undefined
}
/** `GET /api/approvals`: a run waiting for decisions. */
export interface PendingApproval {
  readonly runId: string
  readonly agent: string
  readonly source: string
  readonly calls: ReadonlyArray<PendingCall>
  readonly since: string | number
}
/** One decision sent with `POST /api/approvals/:runId`. */
export type Decision =
  | { readonly callId: string; readonly decision: "approve" }
  | { readonly callId: string; readonly decision: "deny"; readonly reason?: string }
  | { readonly callId: string; readonly decision: "edit"; readonly arguments: unknown }
/** `GET /api/sessions`: one row. */
export interface SessionSummary {
  readonly id: string
  readonly updatedAt: string | number
  readonly messages: number
  readonly waiting: boolean
}
/** `GET /api/sessions/:id`. */
export interface SessionDetail {
  readonly id: string
  readonly messages: ReadonlyArray<unknown>
  readonly waiting?: unknown
}
/** `GET /api/events`: something changed in a list. */
export interface ListChange {
  readonly type: "run" | "approval"
  readonly runId: string
}
