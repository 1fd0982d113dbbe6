/**
 * Composition: agents and composites combined into larger agents. Every operator returns a `Composite`,
 * itself runnable and composable.
 */
export { branch } from "./branch.ts"
export type { BranchCases } from "./branch.ts"
export { CompositeSnapshotSchema } from "./composite-snapshot.ts"
export type { CompositeSnapshot, CompositeSuspended } from "./composite-snapshot.ts"
export type { AnyComposite, Composite, CompositeBudget, CompositeEnd, CompositeHookFailed, CompositeKind, CompositeStart, CompositeStreamEvent } from "./composite.ts"
export { BranchNotRouted, LoopLimitExceeded, StepFailed } from "./errors.ts"
export type { CompositionError } from "./errors.ts"
export { forum, renderBrief } from "./forum.ts"
export type { ForumBrief } from "./forum.ts"
export { ParentRun } from "../dsl/lineage.ts"
export { loop } from "./loop.ts"
export type { LoopOptions } from "./loop.ts"
export { parallel } from "./parallel.ts"
export type { ParallelOptions, Settled } from "./parallel.ts"
export { pipeline } from "./pipeline.ts"
export { isRunnable } from "./runnable.ts"
export type { InputOf, OutputOf, Runnable } from "./runnable.ts"
