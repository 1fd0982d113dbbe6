/**
 * The trail of a session's turn: what its run (and the agents it handed off to) exchanged so far, kept
 * for the turn that fails or is interrupted. Most errors carry no transcript, yet the calls that ran
 * before the failure really happened, and the session must record them, or the next turn's model does
 * not know and may run them again. So the session follows the turn's runs (their contexts, whose
 * transcript holds every result the loop appended, as the model would see it: a substitute's, an
 * escalation's, a denial's) and runs a copy of its definition (its handoff targets too) that hears four
 * events: each `ModelCall`'s request is the transcript at that call (the trail's checkpoint); the
 * `ModelResponse` after it holds the calls the model asked for, and `ToolUse` (or `ToolError` for a
 * failed call the run went on from) gives the result each got. The transcript at the end (an error's,
 * `BudgetExceeded` or `OutputInvalid`, else the current run's) gives the turn exactly, but for the
 * results of a concurrent batch cut short, appended only when the whole batch is done: those come from
 * the events, rendered as the loop renders them; one that a substitute or an escalation answered is
 * rendered as the failure it answered (its reply is in no event). Hearing changes nothing in the run:
 * these events cost what a hook on them costs.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import type { AgentEvent, RegisteredListener } from "../dsl/events.ts"
import { decodeSnapshotValue, type RunSnapshot } from "../dsl/run-snapshot.ts"
import type { WaitingRun } from "../dsl/session-store.ts"
import type { AnyTool } from "../dsl/tool.ts"
import type { AgentError } from "../errors.ts"
import { isRecord } from "../internal/is-record.ts"
import { exchangesOf } from "../model/exchanges.ts"
import type { LlmMessage } from "../model/messages.ts"
import { routingScope } from "./choose-skill.ts"
import { toolFailedFeedback, toolResultContent, untrustedContent } from "./prompt.ts"

/**
 * What a session's turn exchanged so far, as its events tell it.
 *
 * @example
 * ```ts
 * const trail = new TurnTrail() // heard through withTurnTrail, read by failedTurn
 * ```
 */
export class TurnTrail {
  /** The request of the turn's last model call: the transcript then, system prompt first. */
  #checkpoint: ReadonlyArray<LlmMessage> | undefined
  /** The model's answer to that call when it asked for tools. */
  #asked: LlmMessage | undefined
  /** The results the calls got since, by call id, in the order they came. */
  readonly #answered = new Map<string, LlmMessage>()
  /** The turn's current run (the last handoff target it reached), whose transcript grows as it goes. */
  #run: { readonly transcript: ReadonlyArray<LlmMessage> } | undefined

  /** Follows a run of the turn (its own, then each handoff target's, in order). */
  follow(run: { readonly transcript: ReadonlyArray<LlmMessage> }): void {
    this.#run = run
  }

  /** Hears an event of a run of the turn whose registered tools are `tools`. */
  hear(tools: ReadonlyArray<AnyTool>, event: AgentEvent): void {
    // A model-routed skill choice is no part of the conversation.
    if ("skill" in event && event.skill === routingScope) return
    switch (event._tag) {
      case "ModelCall":
        this.#checkpoint = event.request.messages
        this.#asked = undefined
        this.#answered.clear()
        return
      case "ModelResponse": {
        const response = event.response
        // As the loop appends it (`callsExpected` in step.ts).
        this.#asked = response._tag !== "ToolCalls" || response.calls.length === 0
          ? undefined
          : response.reasoning === undefined || response.reasoning.length === 0
          ? { role: "assistant", content: response.content ?? "", toolCalls: response.calls }
          : { role: "assistant", content: response.content ?? "", toolCalls: response.calls, reasoning: response.reasoning }
        return
      }
      case "ToolUse": {
        const untrusted = tools.find((tool) => tool.name === event.tool)?.untrustedOutput === true
        const content = untrusted ? untrustedContent(event.tool, event.result) : toolResultContent(event.result)
        this.#answered.set(event.toolCallId, { role: "tool", toolCallId: event.toolCallId, name: event.tool, content })
        return
      }
      case "ToolError":
        // `Fail` and `ThrowException` end the run with this call: it is left out. Otherwise the run goes
        // on from it: feedback is what the model gets (also after the last retry; a run again replaces
        // it); a substitute's or an escalation's reply is not in the event, so the failure it answered
        // stands for it: the model learns the call ran.
        if (event.recovery === "Fail" || event.recovery === "ThrowException") {
          this.#answered.delete(event.toolCallId)
        } else {
          const content = toolFailedFeedback(event.tool, event.error)
          this.#answered.set(event.toolCallId, { role: "tool", toolCallId: event.toolCallId, name: event.tool, content })
        }
        return
      default:
        return
    }
  }

  /** The transcript at the turn's last model call, if it made one. */
  get checkpoint(): ReadonlyArray<LlmMessage> | undefined {
    return this.#checkpoint
  }

  /** The transcript of the turn's current run as it is now (a copy), if the turn got to one. */
  get transcript(): ReadonlyArray<LlmMessage> | undefined {
    return this.#run?.transcript.slice()
  }

  /** `base` (the last checkpoint, or what a resumed run started from), then what was asked and answered since. */
  since(base: ReadonlyArray<LlmMessage>): ReadonlyArray<LlmMessage> {
    return [...base, ...(this.#asked === undefined ? [] : [this.#asked]), ...this.#answered.values()]
  }

  /**
   * `transcript` (an error's, at the failure) with the results heard for its last calls that it lacks:
   * a concurrent batch appends its results when all of them are done, so one that ended the run leaves
   * its siblings' results out of the transcript although they ran.
   */
  answering(transcript: ReadonlyArray<LlmMessage>): ReadonlyArray<LlmMessage> {
    let at = transcript.length - 1
    while (at >= 0 && !(transcript[at]!.role === "assistant" && "toolCalls" in transcript[at]!)) at--
    const asked = transcript[at]
    if (asked?.role !== "assistant" || this.#answered.size === 0) return transcript
    let end = at + 1
    while (transcript[end]?.role === "tool") end++
    const given = new Set(transcript.slice(at + 1, end).map((message) => (message as Extract<LlmMessage, { role: "tool" }>).toolCallId))
    const missing = [...this.#answered.values()].filter((result) =>
      result.role === "tool" && !given.has(result.toolCallId) && (asked.toolCalls ?? []).some((call) => call.id === result.toolCallId)
    )
    return missing.length === 0 ? transcript : [...transcript.slice(0, end), ...missing, ...transcript.slice(end)]
  }
}

/** The trail of the session turn being run, if any. */
const CurrentTurnTrail = Context.Reference<TurnTrail | undefined>("effect-agent-dsl/CurrentTurnTrail", {
  defaultValue: () => undefined
})

/**
 * `effect` with its session turn's runs heard by `trail` (they must run a `trailedDefinition`).
 *
 * @example
 * ```ts
 * const outcome = yield* withTurnTrail(runSessionTurn(trailedDefinition(definition), input, history), trail)
 * ```
 */
export const withTurnTrail = <A, E, R>(effect: Effect.Effect<A, E, R>, trail: TurnTrail): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, CurrentTurnTrail, trail)

const heard: ReadonlyArray<AgentEvent["_tag"]> = ["ModelCall", "ModelResponse", "ToolUse", "ToolError"]

/** One copy per definition (so one plan each), made once. */
const trailed = new WeakMap<AgentDefinition, AgentDefinition>()

/**
 * `definition` with listeners that tell the trail of the current turn what its runs exchange, and its
 * handoff targets likewise (targets that hand back to it included). Listeners are no part of a
 * definition's fingerprint, so its snapshots resume with the definition itself and the other way round.
 *
 * @example
 * ```ts
 * const trailed = trailedDefinition(definition) // made once per definition
 * ```
 */
export const trailedDefinition = (definition: AgentDefinition): AgentDefinition => {
  const known = trailed.get(definition)
  if (known !== undefined) return known
  const tools = definition.tools
  const listener = (event: AgentEvent) => Effect.map(CurrentTurnTrail, (trail) => trail?.hear(tools, event))
  const skills: Array<SkillDefinition> = []
  const copy: AgentDefinition = Object.freeze({
    ...definition,
    listeners: [...definition.listeners, ...heard.map((event): RegisteredListener => ({ event, listener }))],
    skills
  })
  // Set before the targets are copied: a target that hands back finds this copy.
  trailed.set(definition, copy)
  for (const skill of definition.skills) {
    skills.push(skill.handoffs.length === 0 ? skill : Object.freeze({ ...skill, handoffs: skill.handoffs.map(trailedDefinition) }))
  }
  Object.freeze(skills)
  return copy
}

/**
 * The messages of a failed turn from its user message on (`historyLength` earlier messages were given
 * to its run): the error's transcript when it has one that continues the trail, else its current run's,
 * else the trail's; `waiting`, the snapshot a resumed turn started from, stands for what the trail has
 * not heard yet. Calls may be left without their results (the caller keeps the paired ones); empty
 * when the turn's run never got as far as a model call.
 *
 * @example
 * ```ts
 * const unsaved = yield* failedTurn(trail, error, history.length) // [user, assistant (calls), tool, …]
 * ```
 */
export const failedTurn = (trail: TurnTrail, error: AgentError, historyLength: number, waiting?: unknown): Effect.Effect<ReadonlyArray<LlmMessage>> =>
  partialTurn(trail, error._tag === "BudgetExceeded" || error._tag === "OutputInvalid" ? error.transcript : undefined, historyLength, waiting)

/**
 * The messages of an interrupted turn from its user message on, as `failedTurn` gives a failed one's,
 * with every call that had no result yet given `interruptedContent` as its result (it was running, or
 * waiting for its turn to run: its outcome is unknown); empty when none of the turn's calls got a
 * result of its own (nothing is known to have run).
 *
 * @example
 * ```ts
 * const unsaved = yield* interruptedTurn(trail, history.length) // [user, assistant (calls), tool, …, tool (interrupted)]
 * ```
 */
export const interruptedTurn = (trail: TurnTrail, historyLength: number, waiting?: unknown): Effect.Effect<ReadonlyArray<LlmMessage>> =>
  Effect.map(partialTurn(trail, undefined, historyLength, waiting), (turn) => (turn.some((message) => message.role === "tool") ? closed(turn) : []))

/**
 * The result an interrupted turn records for a call that had none: the model reads that the call may
 * have had its effect, so it checks before calling it again rather than doing it twice.
 *
 * @example
 * ```ts
 * const result = { role: "tool", toolCallId: call.id, name: call.name, content: interruptedContent(call.name) }
 * ```
 */
export const interruptedContent = (tool: string): string =>
  `interrupted: the turn was stopped before ${JSON.stringify(tool)} gave a result; it may have run, in part or in full, or not at all. Check its effect before calling it again.`

/** The turn's messages from the transcript that tells most (see `failedTurn`). */
const partialTurn = (
  trail: TurnTrail,
  exact: ReadonlyArray<LlmMessage> | undefined,
  historyLength: number,
  waiting: unknown
): Effect.Effect<ReadonlyArray<LlmMessage>> =>
  Effect.map(trail.checkpoint !== undefined || waiting === undefined ? Effect.succeed(undefined) : waitingTranscript(waiting), (start) => {
    const base = trail.checkpoint ?? start
    if (base === undefined) return []
    // Another run's (an agent called as a tool whose budget ran out) is not this conversation; nor is a
    // deterministic skill's empty one.
    const known = [exact, trail.transcript].find((transcript) => transcript !== undefined && continues(transcript, base))
    const transcript = known !== undefined ? trail.answering(known) : trail.since(base)
    return transcript.slice(1 + historyLength)
  })

/** `messages` with each call that has no result among the results after it answered by `interruptedContent`. */
const closed = (messages: ReadonlyArray<LlmMessage>): ReadonlyArray<LlmMessage> => {
  const out: Array<LlmMessage> = []
  for (const { message, results } of exchangesOf(messages)) {
    out.push(message, ...results)
    if (message.role !== "assistant" || message.toolCalls === undefined) continue
    const answered = new Set(results.map((result) => result.toolCallId))
    for (const call of message.toolCalls) {
      if (answered.has(call.id)) continue
      answered.add(call.id)
      out.push({ role: "tool", toolCallId: call.id, name: call.name, content: interruptedContent(call.name) })
    }
  }
  return out
}

/**
 * The messages of a waiting run's turn from its user message on, as far as it went: what a send that
 * abandons it keeps of it (the calls that ran before it suspended). Empty when its snapshot does not decode.
 *
 * @example
 * ```ts
 * const turn = yield* waitingTurn(abandoned) // [user, assistant (calls), tool, …]
 * ```
 */
export const waitingTurn = (run: WaitingRun): Effect.Effect<ReadonlyArray<LlmMessage>> =>
  Effect.map(waitingState(run.snapshot), (state) =>
    state === undefined ? [] : [...state.transcript.slice(1 + run.historyLength), ...(state.children ?? []).flatMap(abandonedChild)]
  )

/** The state of a suspended run where it waits: its own, or its handoff target's (which holds it). */
const waitingState = (snapshot: unknown): Effect.Effect<RunSnapshot["state"] | undefined> =>
  decodeSnapshotValue(snapshot).pipe(
    Effect.flatMap((decoded): Effect.Effect<RunSnapshot["state"] | undefined> => {
      const handoff = decoded.state.handoff
      return handoff === undefined ? Effect.succeed(decoded.state) : waitingState(handoff.snapshot)
    }),
    Effect.orElseSucceed(() => undefined)
  )

/** The transcript of a suspended run where it waits (see `waitingState`). */
const waitingTranscript = (snapshot: unknown): Effect.Effect<ReadonlyArray<LlmMessage> | undefined> =>
  Effect.map(waitingState(snapshot), (state) => state?.transcript)

/**
 * The result an abandoned run records for its call of an agent used as a tool that was waiting for a
 * decision, when that agent (or one it called) had already run some of its calls: they happened, and
 * the model reads what they gave and what never ran, instead of a call it could not tell from one never
 * made. None when nothing of the child had run (its waiting calls never run: the call is left out).
 */
const abandonedChild = (child: { readonly id: string; readonly tool: string; readonly snapshot: unknown }): ReadonlyArray<LlmMessage> => {
  const done: Array<string> = []
  const waiting: Array<string> = []
  childWork(child.snapshot, done, waiting, 0)
  if (done.length === 0) return []
  const content = `abandoned: the conversation moved on while ${JSON.stringify(child.tool)} waited for a decision. What it had done stands: ${done.join("; ")}.${waiting.length === 0 ? "" : ` What waited never ran: ${waiting.join(", ")}.`}`
  return [{ role: "tool", toolCallId: child.id, name: child.tool, content }]
}

/** How much of a child's tool result an abandoned call's result quotes. */
const quotedResultLength = 200

/** What a suspended child's snapshot (JSON) says ran (`tool → "result"`) and waits (`tool`), its own children's too. */
const childWork = (snapshot: unknown, done: Array<string>, waiting: Array<string>, depth: number): void => {
  const state = isRecord(snapshot) ? snapshot.state : undefined
  if (!isRecord(state) || depth > 16) return
  for (const message of Array.isArray(state.transcript) ? state.transcript : []) {
    if (!isRecord(message) || message.role !== "tool" || typeof message.name !== "string" || typeof message.content !== "string") continue
    const result = message.content.length > quotedResultLength ? `${message.content.slice(0, quotedResultLength)}…` : message.content
    done.push(`${message.name} → ${JSON.stringify(result)}`)
  }
  for (const entry of Array.isArray(state.awaiting) ? state.awaiting : []) if (isRecord(entry) && typeof entry.tool === "string") waiting.push(entry.tool)
  for (const entry of Array.isArray(state.children) ? state.children : []) if (isRecord(entry)) childWork(entry.snapshot, done, waiting, depth + 1)
}

/**
 * True when `transcript` is `base` and then some, system prompts aside (a handoff target's
 * transcript is the conversation handed to it after its own prompt).
 */
const continues = (transcript: ReadonlyArray<LlmMessage>, base: ReadonlyArray<LlmMessage>): boolean => {
  const longer = transcript.filter((message) => message.role !== "system")
  const prefix = base.filter((message) => message.role !== "system")
  return prefix.length <= longer.length && prefix.every((message, i) => message === longer[i] || JSON.stringify(message) === JSON.stringify(longer[i]))
}
