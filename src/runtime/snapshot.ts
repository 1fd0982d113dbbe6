/**
 * Run snapshots: the complete state of a run between two steps (skill, transcript, pending tool calls,
 * budget ledger and counters, invalid-argument retries, the knowledge loaded so far), with the
 * definition's fingerprint, as a Schema with a JSON encoding. `resumeRun` continues a run from one, in
 * this process or another; a definition whose fingerprint differs is refused with `DefinitionChanged`.
 */
import * as Effect from "effect/Effect"
import type { RunSnapshot } from "../dsl/run-snapshot.ts"
import { DefinitionChanged } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"
import type { AgentPlan, SkillPlan } from "./plan.ts"
import type { RunContext, RunState } from "./run-context.ts"
import { decidedEntries } from "./approval.ts"
import { childEntries } from "./child-runs.ts"

export { decodeSnapshot, decodeSnapshotValue, encodeSnapshot, type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"

/** The snapshot of `ctx` at `now`. */
export const snapshotOf = (ctx: RunContext, now: number): RunSnapshot => {
  const state = ctx.state(now)
  const { lastTool, ...ledger } = state.ledger
  const decided = decidedEntries(ctx.decisions)
  const children = childEntries(ctx)
  return {
    version: 1,
    agent: ctx.plan.name,
    fingerprint: ctx.plan.fingerprint(),
    state: { ...state, ledger: lastTool === undefined ? ledger : { ...ledger, lastTool }, ...(decided === undefined ? {} : { decided }), ...(children === undefined ? {} : { children }) }
  }
}

/** The run state a snapshot holds, as the run context takes it. */
export const stateOf = (snapshot: RunSnapshot): RunState => ({
  ...snapshot.state,
  transcript: snapshot.state.transcript as ReadonlyArray<LlmMessage>,
  ledger: { ...snapshot.state.ledger, lastTool: snapshot.state.ledger.lastTool }
})

/** The skill to continue in, when the snapshot was taken with a definition of the same shape. */
export const checkSnapshot = (plan: AgentPlan, snapshot: RunSnapshot): Effect.Effect<SkillPlan, DefinitionChanged> => {
  const expected = plan.fingerprint()
  const refuse = (found: string, reason: string) => Effect.fail(new DefinitionChanged({ agent: plan.name, expected, found, reason }))
  if (snapshot.agent !== plan.name) return refuse(snapshot.agent, `the snapshot belongs to agent "${snapshot.agent}"`)
  if (snapshot.fingerprint !== expected) {
    return refuse(snapshot.fingerprint, `the definition changed since the snapshot (fingerprint ${snapshot.fingerprint}, now ${expected}): tools, parameters, skills or budget differ`)
  }
  const skill = plan.skillByName.get(snapshot.state.skill)
  return skill === undefined ? refuse(snapshot.fingerprint, `the snapshot's skill "${snapshot.state.skill}" does not exist`) : Effect.succeed(skill)
}
