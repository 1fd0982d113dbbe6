/**
 * Internal: whether spans carry message content, as one reference every layer that makes spans reads
 * (the loop, composites). Re-exported by `runtime/gen-ai-content.ts`, the public face of capture.
 */
import * as Context from "effect/Context"

/** The environment variable the GenAI conventions' instrumentations read. */
export const captureContentVariable = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

/** Whether `value` (of the variable above) turns capture on: `true` or `1`, any case; anything else leaves it off. */
export const captureFlag = (value: string | undefined): boolean => value !== undefined && /^(true|1)$/i.test(value.trim())

const fromEnvironment = (): boolean => {
  try {
    return captureFlag(typeof process === "undefined" ? undefined : process.env[captureContentVariable])
  } catch {
    // A sandbox whose `process.env` throws: no capture.
    return false
  }
}

/**
 * Whether spans carry message content (prompts, completions, tool arguments and results). Default:
 * the `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` environment variable (`true` or `1`), else
 * off. Provide it to decide in code, whatever the environment says.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CaptureMessageContent } from "effect-agent-dsl"
 * const traced = calculator.runEffect("2 + 2").pipe(Effect.provideService(CaptureMessageContent, true))
 * ```
 */
export const CaptureMessageContent = Context.Reference<boolean>("effect-agent-dsl/CaptureMessageContent", {
  defaultValue: fromEnvironment
})
