/**
 * Mistakes the compiler refuses with a message that says what to do. `tsc --noEmit` fails if an
 * `@ts-expect-error` line stops being an error; the calls are wrapped so that the construction-time
 * checks (the same mistakes from plain JavaScript, `test/dsl/untyped-callers.test.ts`) do not run.
 */
import { Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { agent, Recovery, skill, tool } from "../../src/index.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const never = (_f: () => unknown): void => undefined

describe(".tools(...) takes a record keyed by tool names", () => {
  it("refuses an array, a Map and a single tool, saying to write .tools({ add })", () => {
    // @ts-expect-error .tools(...) takes a record keyed by the tools' names, not an array
    never(() => agent("a").tools([add]))
    // @ts-expect-error .tools(...) takes a record keyed by the tools' names, not a Map
    never(() => agent("a").tools(new Map([["add", add]])))
    // @ts-expect-error .tools(...) takes a record: write .tools({ add })
    never(() => agent("a").tools(add))
  })

  it("still takes a record, and an empty one", () => {
    agent("a").tools({ add }).tools({})
  })
})

describe(".skills(...) returns at least one skill", () => {
  it("refuses an empty array: it would leave the implicit skill, which may use every tool", () => {
    // @ts-expect-error .skills(...) returned no skills
    never(() => agent("a").tools({ add }).skills(() => []))
  })

  it("still takes a list of skills, also one typed as an array", () => {
    agent("a").tools({ add }).skills(({ add }) => [skill("s").tools(add)])
    const list: ReadonlyArray<ReturnType<typeof skill>> = []
    never(() => agent("a").skills(() => list))
  })
})

describe("a tool from a JSON Schema takes `recover`, as the runtime does", () => {
  it("types recover and refuses onError", () => {
    tool("j", { parameters: { type: "object" }, recover: { executionError: () => Recovery.feedback }, run: () => 1 })
    // @ts-expect-error onError is not an option: a tool's recovery handlers are `recover`
    never(() => tool("j", { parameters: { type: "object" }, onError: { executionError: () => Recovery.feedback }, run: () => 1 }))
  })
})
