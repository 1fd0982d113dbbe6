/**
 * Internal: our log lines that may quote content. Effect's default loggers include `tracerLogger`,
 * which makes every log line an event of the current span, so a line quoting a provider's error
 * message (which may repeat the prompt) or what a hook threw would reach the span exporter even with
 * content capture off. Such a line is logged as it is, for the loggers, but with capture off it is
 * made outside the current span: no span gets it as an event.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"
import { CaptureMessageContent } from "./capture-content.ts"

/** The context without its current span (a log line made in it is no span's event). */
const withoutSpan = <R>(context: Context.Context<R>): Context.Context<R> => Context.omit(Tracer.ParentSpan)(context) as Context.Context<R>

/**
 * `log`, made an event of the current span only when content capture is on.
 *
 * @example
 * ```ts
 * yield* logQuotingContent(Effect.logWarning(`hook failed: ${describeCause(error)}`))
 * ```
 */
export const logQuotingContent = <A, E, R>(log: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => (fiber.getRef(CaptureMessageContent) ? log : Effect.updateContext(log, withoutSpan)))
