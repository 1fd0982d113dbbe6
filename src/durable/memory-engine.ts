/**
 * The in-memory engine: effect/workflow's `WorkflowEngine.layerMemory` with the in-memory stores (intents, approvals, event journal).
 */
import * as Layer from "effect/Layer"
import * as WorkflowEngines from "effect/workflow/WorkflowEngine"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { ApprovalInbox } from "./approval-inbox.ts"
import { RunJournal } from "./run-journal.ts"
import { ToolIntents } from "./tool-intents.ts"

/**
 * The in-memory engine and stores: one process, nothing survives it. For tests and development; the
 * file-backed and PostgreSQL engines are `embeddedEngine` and `postgresRunner`.
 *
 * @example
 * ```ts
 * const result = yield* d.run("2 + 2?").pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))))
 * ```
 */
export const memoryEngine: Layer.Layer<WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal> = Layer.mergeAll(
  WorkflowEngines.layerMemory,
  ToolIntents.memory,
  ApprovalInbox.memory,
  RunJournal.memory
)
