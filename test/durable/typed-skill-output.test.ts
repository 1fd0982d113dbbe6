/**
 * A typed agent's deterministic skill under a durable run: its value is recorded with the output
 * Schema's JSON codec, so a value whose decoded form is not plain JSON (a `Date`) comes back as itself,
 * on the first run and on a replay; a value the Schema refuses is a typed `SkillFailed`, never a defect
 * of its encoding.
 */
import { Effect, Exit, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, skill, SkillFailed } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { failureOf } from "../fixtures.ts"

const Due = Schema.Struct({ when: Schema.Date, n: Schema.Finite.check(Schema.isGreaterThan(0)) })

const onMemory = <A, E>(d: { readonly layer: Layer.Layer<never, never, any> }, program: Effect.Effect<A, E, any>): Promise<Exit.Exit<A, E>> =>
  Effect.runPromise(Effect.exit(program.pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine)))) as Effect.Effect<A, E>))

describe("a durable typed agent's deterministic skill", () => {
  it("gives its Date back as a Date (recorded with the output Schema's JSON codec), once", async () => {
    let runs = 0
    const planner = agent("planner", { output: Due }).skills(() => [
      skill("plan").implementedBy((_: string) => (runs++, { when: new Date("2026-01-02T03:04:05.000Z"), n: 2 }))
    ])
    const d = durable(planner)
    const exit = await onMemory(d, Effect.gen(function*() {
      const first = yield* d.run("x", { runId: "p1" })
      const again = yield* d.run("x", { runId: "p1" })
      return [first, again] as const
    }))
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    for (const result of exit.value) {
      expect(result._tag).toBe("Completed")
      const output = (result as { output: unknown }).output
      expect(output).toMatchObject({ n: 2 })
      expect((output as { when: unknown }).when).toBeInstanceOf(Date)
      expect(((output as { when: Date }).when).toISOString()).toBe("2026-01-02T03:04:05.000Z")
    }
    expect(runs).toBe(1)
  })

  it("a value its Schema refuses is a typed SkillFailed, not a defect", async () => {
    const planner = agent("planner", { output: Due }).skills(() => [skill("plan").implementedBy((_: string) => ({ when: new Date(0), n: -1 }))])
    const d = durable(planner)
    const exit = await onMemory(d, d.run("x", { runId: "p2" }))
    expect(failureOf(exit)).toBeInstanceOf(SkillFailed)
  })
})
