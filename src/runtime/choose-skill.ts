/**
 * Chooses the skill that handles a run: the only one; else the first whose `.when(...)` accepts the
 * input; else the one skill without a predicate; else, among several skills without predicates, the
 * model's choice through a forced `choose_skill` call (a terminal tool: one turn of the budget). An
 * agent without skills has the plan's implicit skill, which may use every registered tool.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { SkillChosenEvent } from "../dsl/events.ts"
import { type ModelError, NoSkillMatched, SkillRoutingFailed } from "../errors.ts"
import { noStackTrace } from "../internal/span-options.ts"
import { withGuardedSpan } from "../internal/guarded-span.ts"
import { withTracing } from "../internal/tracing.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { callModel } from "./call-model.ts"
import { emit, type EventSink, reportHookFailure } from "./emit.ts"
import type { AgentPlan, SkillPlan } from "./plan.ts"
import { agentPreamble, namedList } from "./prompt.ts"
import { stamp, type UnscopedEvent } from "./run-context.ts"
import { routingTerminal } from "./terminal.ts"
import type { Durability } from "./durability.ts"
import type { Steps } from "../internal/steps.ts"

/** The chosen skill, how it was chosen, and what that cost: turns (1 when the model chose) and the routing call's tokens. */
export interface ChosenSkill {
  readonly skill: SkillPlan
  readonly how: SkillChosenEvent["how"]
  readonly turns: number
  readonly tokens?: number
}

/** The skill name used in hooks and spans for the routing call. */
export const routingScope = "(routing)"

export const chooseSkill = (
  plan: AgentPlan,
  runId: string,
  input: string,
  sink?: EventSink,
  durability?: Durability
): Effect.Effect<ChosenSkill, NoSkillMatched | SkillRoutingFailed | ModelError, ModelClientService> => {
  const obvious = obviousSkill(plan)
  return obvious !== undefined ? Effect.succeed(obvious) : Effect.gen(() => chooseAmong(plan, runId, input, sink, durability))
}

/**
 * The skill of an agent that has nothing to choose (its implicit skill, or its only skill without a
 * predicate), in plain code; undefined when `chooseSkill` must choose.
 *
 * @example
 * ```ts
 * const chosen = obviousSkill(plan) ?? (yield* chooseSkill(plan, runId, input))
 * ```
 */
export const obviousSkill = (plan: AgentPlan): ChosenSkill | undefined => {
  const skills = plan.skills
  if (plan.implicitSkill) return { skill: skills[0]!, how: "implicit", turns: 0 }
  if (skills.length === 1 && skills[0]!.definition.predicate === undefined) return { skill: skills[0]!, how: "only", turns: 0 }
  return undefined
}

type Chosen = Steps<ChosenSkill, NoSkillMatched | SkillRoutingFailed | ModelError, ModelClientService>

// Module-level generators, not `function*` expressions per run (see `runSteps` in run-agent.ts).
function* chooseAmong(plan: AgentPlan, runId: string, input: string, sink: EventSink | undefined, durability: Durability | undefined): Chosen {
  const skills = plan.skills
  for (const skill of skills) {
    const predicate = skill.definition.predicate
    if (predicate !== undefined && (yield* accepts(plan, runId, predicate, input, sink))) {
      return { skill, how: "predicate" as const, turns: 0 }
    }
  }
  const fallbacks = skills.filter((s) => s.definition.predicate === undefined)
  if (fallbacks.length === 1) return { skill: fallbacks[0]!, how: "fallback" as const, turns: 0 }
  if (fallbacks.length === 0) return yield* new NoSkillMatched({ agent: plan.name, skills: skills.map((s) => s.name) })
  return yield* routeByModel(plan, runId, input, fallbacks, sink, durability)
}

/** A predicate's verdict; one that throws is reported (as a `SkillChosen` hook failure) and counts as "no". */
const accepts = (plan: AgentPlan, runId: string, predicate: (input: string) => boolean, input: string, sink: EventSink | undefined) =>
  Effect.try({ try: () => predicate(input) === true, catch: (error) => error }).pipe(
    Effect.catch((error) => reportHookFailure(plan, runId, "SkillChosen", error, sink).pipe(Effect.as(false)))
  )

const routeByModel = (
  plan: AgentPlan,
  runId: string,
  input: string,
  candidates: ReadonlyArray<SkillPlan>,
  sink: EventSink | undefined,
  durability: Durability | undefined
) =>
  Effect.gen(() => routeSteps(plan, runId, input, candidates, sink, durability)).pipe((route) =>
    withTracing((traced) =>
      traced ? withGuardedSpan(route, "agent.route", { attributes: { "agent.name": plan.name, "agent.skills": candidates.length }, ...noStackTrace }) : route
    )
  )

function* routeSteps(
  plan: AgentPlan,
  runId: string,
  input: string,
  candidates: ReadonlyArray<SkillPlan>,
  sink: EventSink | undefined,
  durability: Durability | undefined
): Chosen {
  const names = candidates.map((s) => s.name)
  const chooser = routingTerminal(names)
  const scope = { runId, skill: routingScope, turn: 1 }
  const emitRouting = (event: UnscopedEvent) => emit(plan, stamp(plan, scope, event), sink)
  yield* emitRouting({ _tag: "Turn" })
  const response = yield* callModel({ emit: emitRouting }, 1, {
    messages: [
      { role: "system", content: `${agentPreamble(plan.definition)}\n\nChoose the skill that should handle the user's request:\n${namedList(candidates)}` },
      { role: "user", content: input }
    ],
    tools: [chooser.definition],
    toolChoice: { tool: chooser.name }
  }, undefined, durability === undefined ? undefined : (call) => durability.model({ runId, turn: 1, purpose: "route" }, call))
  const fail = (reason: string) => new SkillRoutingFailed({ agent: plan.name, candidates: names, reason })
  if (response._tag !== "ToolCalls") return yield* fail("the model answered text instead of choosing")
  const call = response.calls.find((c) => c.name === chooser.name)
  if (call === undefined) return yield* fail(`the model called ${response.calls.map((c) => c.name).join(", ") || "nothing"} instead of choose_skill`)
  const decoded = chooser.decode(call.arguments)
  if (Result.isFailure(decoded)) return yield* fail(`invalid choice:\n${decoded.failure}`)
  const finish = chooser.finish(decoded.success, { agent: plan.name, skill: routingScope })
  const skill = finish._tag === "Route" ? candidates.find((s) => s.name === finish.skill) : undefined
  if (skill === undefined) return yield* fail("internal: the choice names no candidate")
  const tokens = response.usage === undefined ? 0 : response.usage.inputTokens + response.usage.outputTokens
  return { skill, how: "model" as const, turns: 1, tokens }
}
