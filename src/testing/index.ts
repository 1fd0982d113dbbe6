/**
 * effect-agent-dsl/testing: deterministic model clients for tests of your own agents.
 */
export { recordingModel } from "./recording-model.ts"
export type { RecordingModel } from "./recording-model.ts"
export { scriptedModel } from "./scripted-model.ts"
export type { ModelScript, ScriptStep } from "./scripted-model.ts"
