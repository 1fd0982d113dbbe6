/**
 * `effect-agent-dsl/durable`: durable runs of agents on Effect Workflow (its engine: ours in one
 * process for the embedded engine, Effect Cluster's for PostgreSQL runners). A run
 * is a Workflow keyed by its run id; every model call, tool execution, knowledge load and memory call
 * is an Activity; approvals are durable deferreds decided from any process; `maxDuration` is a
 * durable deadline; every event is journalled, so a run can be followed (`d.follow`, `followResponse`)
 * and inspected (`d.journal`) from any process. See the durable runs guide (docs/guide/durable.md).
 *
 * @module effect-agent-dsl/durable
 */
export { durable } from "./durable-agent.ts"
export { memoryEngine } from "./memory-engine.ts"
export type { AwaitingDecisions, DurableAgent, DurableClient, DurableOptions, DurableRunInfo, DurableRunResult, DurableRunStatus } from "./durable-agent.ts"
export { Reconciled } from "./reconcile.ts"
export type { Reconcile } from "./reconcile.ts"
export { type Intent, type IntentState, ToolIntents, ToolIntentsFailed } from "./tool-intents.ts"
export { ApprovalInbox, ApprovalInboxFailed, type ApprovalWait } from "./approval-inbox.ts"
export { type JournalRecord, RunJournal, RunJournalFailed } from "./run-journal.ts"
export type { DurableEvent, FollowOptions } from "./follow.ts"
export { followResponse, type FollowResponseOptions } from "./follow-response.ts"
export type { DurableJournal, JournalEntry, ToolClaim } from "./run-inspection.ts"
export { approvalInboxSql, durableStoreSql, runJournalSql, type SqlStoreOptions, toolIntentsSql } from "./sql-store.ts"
export { AgentErrorSchema, DecisionsSchema, LlmResponseSchema, ModelErrorSchema, type ToolOutcome, ToolOutcomeSchema } from "./schemas.ts"
export { Cancelled, OutcomeUnknown } from "../errors.ts"
export type { ToolEffectClass } from "../dsl/tool.ts"
export { EngineUnavailable } from "./engines/engine-unavailable.ts"
export { DurableRunUnreadable } from "./run-unreadable.ts"
