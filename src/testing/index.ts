/**
 * effect-agent-dsl/testing: deterministic model clients and a harness to run agents against scripts,
 * for tests of your own agents, and cassettes to record a real provider's answers once and replay them
 * in CI (`recordCassette`, `replayCassette`). Nothing here needs fast-check; the fast-check
 * arbitraries of model behaviour are on their own subpath, `effect-agent-dsl/testing/arbitraries`.
 *
 * @module effect-agent-dsl/testing
 */
export { recordingModel } from "./recording-model.ts"
export type { RecordingModel } from "./recording-model.ts"
export { runInvariants, runScript } from "./run-script.ts"
export type { RunScriptOptions, ScriptOutcome, ScriptRun } from "./run-script.ts"
export { scriptedModel, streamed } from "./scripted-model.ts"
export type { ModelScript, ScriptedModelOptions, ScriptStep, StreamedStep } from "./scripted-model.ts"
export { recordCassette, replayCassette } from "./cassette.ts"
export type { CassetteRecorder, CassetteReplayer, RecordCassetteOptions, ReplayCassetteOptions, ReplayPace } from "./cassette.ts"
export { CASSETTE_VERSION, CassetteError, memoryCassette, parseCassette, stableJson } from "./cassette-format.ts"
export type { Cassette, CassetteSource, CassetteStore, Interaction, RecordedModelError, RecordedOutcome, TimedPart } from "./cassette-format.ts"
export { CassetteMismatch, describeChanges } from "./cassette-match.ts"
export type { MatchRule } from "./cassette-match.ts"
