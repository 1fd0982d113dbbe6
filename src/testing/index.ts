/**
 * effect-agent-dsl/testing: deterministic model clients, fast-check arbitraries of model behaviour,
 * and a harness to run agents against scripts, for tests of your own agents.
 */
export {
  arbInvalidArgs,
  arbLlmResponse,
  arbModelScript,
  arbToolCall,
  arbValidArgs
} from "./arbitraries.ts"
export type { ArbLlmResponseOptions, ArbModelScriptOptions, ArbToolCallOptions } from "./arbitraries.ts"
export { recordingModel } from "./recording-model.ts"
export type { RecordingModel } from "./recording-model.ts"
export { runInvariants, runScript } from "./run-script.ts"
export type { ScriptOutcome, ScriptRun } from "./run-script.ts"
export { scriptedModel } from "./scripted-model.ts"
export type { ModelScript, ScriptStep } from "./scripted-model.ts"
