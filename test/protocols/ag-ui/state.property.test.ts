/**
 * For any sequence of shared-state values a run's tools set (hostile JSON: any nesting, arrays and
 * objects swapping places, keys with `/`, `~`, `__proto__`, empty keys, unicode, top-level scalars),
 * made by parallel or sequential tool calls, the AG-UI stream's `STATE_SNAPSHOT` and `STATE_DELTA`
 * events, applied in order by the patch applier `@ag-ui/client` uses (fast-json-patch, prototype
 * changes banned), reproduce the state the run had at each tool result and at the end; the stream
 * stays well-formed, passes `@ag-ui/core`'s schemas and `@ag-ui/client`'s verifier, and nothing
 * pollutes `Object.prototype`.
 */
import { verifyEvents } from "@ag-ui/client"
import { EventSchemas } from "@ag-ui/core/schemas"
import { fc, test } from "@fast-check/vitest"
import { Effect, Schema, Stream } from "effect"
import jsonPatch from "fast-json-patch"
import { from, lastValueFrom, toArray } from "rxjs"
import { describe, expect } from "vitest"
import { agent, text, tool, toolCalls } from "effect-agent-dsl"
import { type AgUiEvent, agUiState, chatStream, toAgUiEvents } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"
import { wellFormedProblems } from "./well-formed.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

const hostileKey = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "constructor", "prototype", "a/b", "~0", "~1", "/", "~", "", "0", "-"))
const arbJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: "binary", maxLength: 8 })),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileKey, tie("value"), { maxKeys: 4 }).map((o) => JSON.parse(JSON.stringify(o)) as unknown)
  )
})).value
/** The values as JSON would carry them (-0 is 0). */
const asJson = (u: unknown) => JSON.parse(JSON.stringify(u)) as unknown

const doc = agUiState("doc", Schema.Unknown)

describe("AG-UI shared state of any run", () => {
  test.prop([fc.array(arbJson, { minLength: 1, maxLength: 6 }), arbJson, fc.integer({ min: 1, max: 3 })], { numRuns })(
    "applied in order, the state events reproduce the run's state at each tool result and at the end",
    async (values, initial, perTurn) => {
      let next = 0
      const put = tool("put", { args: Schema.Struct({ i: Schema.Int }), run: ({ i }) => Effect.as(doc.set(values[i]), `put ${i}`) })
      const model = scriptedModel(() => {
        if (next >= values.length) return text("done")
        const calls = values.slice(next, next + perTurn).map((_, k) => ({ id: `p${next + k}`, name: "put", arguments: { i: next + k } }))
        next += calls.length
        return toolCalls(calls)
      })
      const cell = doc.cell(initial)
      const builder = agent("doc").prompt("p").model(model).tools({ put })
      const out = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(cell.provideStream(chatStream(builder, [], "go")), { state: cell })))] as Array<AgUiEvent>

      expect(wellFormedProblems(out as never)).toEqual([])
      for (const event of out) {
        const parsed = EventSchemas.safeParse(event)
        if (!parsed.success) throw new Error(`${JSON.stringify(event)}: ${parsed.error.message}`)
      }
      await lastValueFrom(from(out as Array<never>).pipe(verifyEvents(false), toArray()))

      expect(out[1]).toEqual({ type: "STATE_SNAPSHOT", snapshot: asJson(initial) })
      let state: unknown = undefined
      for (const event of out) {
        if (event.type === "STATE_SNAPSHOT") state = structuredClone(event.snapshot)
        if (event.type === "STATE_DELTA") state = jsonPatch.applyPatch(state, structuredClone(event.delta) as never, true, false).newDocument
        if (event.type === "TOOL_CALL_RESULT") {
          // Calls of one turn run concurrently: at a result, the state is one of the values set so far.
          const i = Number(event.content.replace("put ", ""))
          const upTo = values.slice(0, Math.min(values.length, Math.ceil((i + 1) / perTurn) * perTurn)).map(asJson)
          expect(upTo).toContainEqual(state)
        }
      }
      expect(state).toEqual(asJson(cell.current()))
      expect(state).toEqual(asJson(values.at(-1)))
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.keys(Object.prototype)).toEqual([])
    }
  )
})
