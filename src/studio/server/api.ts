/**
 * The studio's HTTP API, as types: what each endpoint answers and accepts. The front end imports them
 * type-only (`import type { RunSummary } from "../../server/api.ts"`), so the two sides cannot drift.
 *
 * Every `/api/*` call needs the token the studio prints at start: `Authorization: Bearer <token>`, the
 * `x-studio-token` header, or a `token` query parameter (for `EventSource`); no cookie (cookies are not
 * kept apart by port: every other server on the host would receive it). Requests whose `Host` is not the
 * studio's own address, or whose `Origin` is another site, are refused (403) before the token is read.
 *
 * | method | path | answer |
 * |---|---|---|
 * | GET | /api/agents | `AgentInfo[]` |
 * | POST | /api/agents/:id/runs `{ input }` | 200 `{ runId }` once the run emitted its first event; 400 `InputInvalid` |
 * | GET | /api/runs?status=&agent=&source=&limit= | `RunSummary[]`, newest first |
 * | GET | /api/runs/:id | `RunDetail` |
 * | GET | /api/runs/:id/stream | SSE of the run's own `StoredEvent`s (`id:` lines; `Last-Event-ID` or `?lastEventId=` resumes), then `event: end` `{ runId, status }` when it ends or suspends (reconnect after a decision); a composite's members stream under their own run ids (`children`) |
 * | POST | /api/runs/:id/stop | 202 `{ runId }` |
 * | GET | /api/approvals | `ApprovalItem[]` |
 * | POST | /api/approvals/:runId `ApprovalRequest` | 200 `{ runId }`, 400 `ApiError` (details: DecisionsInvalid) |
 * | GET | /api/sessions | `SessionSummary[]` |
 * | GET | /api/sessions/:id | `SessionDetail` |
 * | GET | /api/events | SSE of `ListChange` |
 * | POST | /api/ingest `IngestBatch` | 202 `{ accepted }` (what `studioHooks` sends) |
 * | POST | /api/import `{ jsonl }` or JSONL text | 200 `{ runs, skipped, kept }` (a JSONL trace file; `kept`: runs of another source it did not replace) |
 *
 * A path of this table called with another method answers 405 `MethodNotAllowed` with the methods it
 * accepts in `Allow`; any other path 404. The two SSE streams send a comment every 15 s (the
 * `keepAliveMs` option) and name that interval in the header `x-studio-keep-alive-ms`.
 */

/** The run statuses the studio shows. */
export type RunStatus = "running" | "suspended" | "completed" | "failed" | "cancelled"

/** Where a run came from. */
export type RunSource = "studio" | "ingest" | "trace" | "durable"

/** A tool as the playground shows it. */
export interface ToolInfo {
  readonly name: string
  readonly description: string | undefined
  /** The JSON Schema the model is offered (the tool's `parameters`). */
  readonly jsonSchema: unknown
  /** How its effects behave when a durable run executes it again. */
  readonly effect: "readOnly" | "idempotent" | "mutating"
  /** `never`, `always`, or `conditional` (a predicate on the arguments decides). */
  readonly approval: "never" | "always" | "conditional"
}

/** A skill and the names of the tools on its allowlist. */
export interface SkillInfo {
  readonly name: string
  readonly description: string
  readonly tools: ReadonlyArray<string>
}

/** The budget limits of an agent or composite; `null` is unlimited (JSON has no Infinity). */
export type BudgetInfo = Readonly<Record<string, number | null>>

/** One agent or composite exported by the loaded module (`GET /api/agents`). */
export interface AgentInfo {
  /** The export name: the `:id` of `POST /api/agents/:id/runs`. */
  readonly id: string
  readonly name: string
  readonly kind: "agent" | "composite"
  readonly description: string | undefined
  /** The model's description (`provider/model` when known), undefined without one. */
  readonly model: string | undefined
  readonly budgets: BudgetInfo
  readonly skills: ReadonlyArray<SkillInfo>
  readonly tools: ReadonlyArray<ToolInfo>
  /** The JSON Schema of the input; `{ "type": "string" }` for agents without an input Schema. */
  readonly inputJsonSchema: unknown
  /** Composites: the names of their members, in order. */
  readonly members?: ReadonlyArray<string>
}

/** Token usage. */
export interface TokenUsage {
  readonly input: number
  readonly output: number
  readonly total: number
}

/** One run in a list (`GET /api/runs`). */
export interface RunSummary {
  readonly runId: string
  readonly agent: string
  readonly status: RunStatus
  readonly source: RunSource
  /** Epoch milliseconds. */
  readonly startedAt: number
  readonly endedAt?: number
  readonly durationMs?: number
  readonly turns: number
  readonly tokens: TokenUsage
  /** The error's message when the run failed. */
  readonly error?: string
  readonly parentRunId?: string
  /** `composite` for a composite's own run. */
  readonly kind?: "agent" | "composite"
}

/**
 * One event of a run, as stored: `id` increases by one per event of the run (the SSE `id:`), `at` in
 * epoch milliseconds, `event` the run event as JSON (`AgentEvent`, deltas, `CompositeStart`/`CompositeEnd`,
 * and the studio's own `StudioDecision`), errors as `{ _tag, message, ... }`.
 */
export interface StoredEvent {
  readonly id: number
  readonly at: number
  readonly event: { readonly _tag: string; readonly runId?: string; readonly [field: string]: unknown }
}

/** One model call of a run, as the model saw it. */
export interface ModelRequestInfo {
  readonly turn: number
  readonly skill?: string
  /** The system prompt the request carried. */
  readonly system: string | undefined
  /** The names of the tools offered (the allowlist in effect). */
  readonly tools: ReadonlyArray<string>
  readonly toolChoice?: unknown
  /** The transcript sent (without the system message), or the message count when only that is known (traces). */
  readonly messages: ReadonlyArray<unknown> | number
  /** The raw answer (`LlmResponse`), absent while the call is in flight. */
  readonly response?: unknown
  readonly latencyMs?: number
  /** When the call was made (epoch ms): with `latencyMs`, the bar of a waterfall. */
  readonly startedAt?: number
  readonly usage?: unknown
  /** The provider's `FinishReason` (`stop`, `tool-calls`, `length`, …; `stop`/`tool-calls` by the answer when it gave none), absent while in flight. */
  readonly finishReason?: string
}

/** A budget dimension: the limit (null: unlimited) and what the run used. */
export interface BudgetUse {
  readonly limit: number | null
  readonly used: number
}

/** Who decided what about a waiting call, and when (`RunDetail.decisions`). */
export interface DecisionRecord {
  readonly callId: string
  readonly tool: string | undefined
  readonly decision: "approve" | "deny" | "edit"
  readonly reason?: string
  readonly arguments?: unknown
  readonly decidedBy: string
  readonly at: number
}

/** A run with everything the detail page shows (`GET /api/runs/:id`). */
export interface RunDetail {
  readonly summary: RunSummary
  readonly events: ReadonlyArray<StoredEvent>
  /** The run ids of its child runs (members of a composite, agents called as tools, handoff targets). */
  readonly children: ReadonlyArray<string>
  readonly budgets: Readonly<Record<string, BudgetUse>>
  readonly requests: ReadonlyArray<ModelRequestInfo>
  readonly decisions: ReadonlyArray<DecisionRecord>
  /** The run's input (from `RunStart` / `CompositeStart`). */
  readonly input?: unknown
  /** The run's output when it completed. */
  readonly output?: unknown
}

/** A call waiting for a decision. */
export interface PendingCallInfo {
  readonly callId: string
  readonly tool: string
  readonly arguments: unknown
  /** Why an interceptor suspended it (absent when the tool's approval policy did). */
  readonly reason: string | undefined
  /** The tool's argument JSON Schema: the form for an `edit`. Undefined when the studio does not know the tool. */
  readonly jsonSchema: unknown
}

/** A run waiting for decisions (`GET /api/approvals`). */
export interface ApprovalItem {
  readonly runId: string
  readonly agent: string
  readonly source: RunSource
  readonly calls: ReadonlyArray<PendingCallInfo>
  /** When it started waiting (epoch ms). */
  readonly since: number
}

/** One decision of `POST /api/approvals/:runId`. */
export interface DecisionInput {
  readonly callId: string
  readonly decision: "approve" | "deny" | "edit"
  /** Why (`deny`; optional note otherwise). */
  readonly reason?: string
  /** The edited arguments (`edit`), decoded by the tool's Schema before anything runs. */
  readonly arguments?: unknown
}

/** The body of `POST /api/approvals/:runId`: one decision per waiting call. */
export interface ApprovalRequest {
  readonly decisions: ReadonlyArray<DecisionInput>
  /** Who decides (recorded with the decision); default `"studio"`. */
  readonly decidedBy?: string
}

/** A conversation of the session store (`GET /api/sessions`). */
export interface SessionSummary {
  readonly id: string
  /** Epoch ms of the last change the studio saw; undefined when unknown. */
  readonly updatedAt: number | undefined
  readonly messages: number
  /** True when a run of the session waits for decisions. */
  readonly waiting: boolean
}

/** A conversation's messages (`GET /api/sessions/:id`). */
export interface SessionDetail {
  readonly id: string
  readonly messages: ReadonlyArray<unknown>
  readonly waiting?: unknown
}

/** A change of the live lists (`GET /api/events`). */
export interface ListChange {
  readonly type: "run" | "approval"
  readonly runId: string
}

/** What `studioHooks` posts to `/api/ingest`: events of one application process, in order. */
export interface IngestBatch {
  /** Identifies the sending process (for the run's source). */
  readonly process?: string
  readonly events: ReadonlyArray<{ readonly at: number; readonly event: StoredEvent["event"] }>
}

/** An error answer: `error` a short code (`Unauthorized`, `NotFound`, `DecisionsInvalid`, …), `details` more. */
export interface ApiError {
  readonly error: string
  readonly message: string
  readonly details?: unknown
}
