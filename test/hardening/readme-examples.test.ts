/**
 * Issue #28 item 15: README examples that are wrong against the API. Checked generically so the
 * same mistakes do not come back: `openai(model, options)` takes the model name first; every
 * `Schedule.x` named in the README and the model-error policy's doc comment exists in Effect 4; a
 * `.tools({ x })` shorthand uses a tool whose name is `x` (the README's own rule: keys are tool names).
 */
import { readdirSync, readFileSync } from "node:fs"
import { Effect, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelClient, ModelError, ModelErrorPolicy, text, withModelErrorPolicy } from "../../src/index.ts"

// The documentation: the README's front page and the guides of the docs site (docs/guide).
const guides = new URL("../../docs/guide/", import.meta.url)
const readme = [
  readFileSync(new URL("../../README.md", import.meta.url), "utf8"),
  ...readdirSync(guides).filter((name) => name.endsWith(".md")).map((name) => readFileSync(new URL(name, guides), "utf8"))
].join("\n")
const policySource = readFileSync(new URL("../../src/model/model-error-policy.ts", import.meta.url), "utf8")
/** The TypeScript code blocks of the README and the guides (` ```ts ` and ` ```ts partial `), joined. */
const code = [...readme.matchAll(/```ts[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!).join("\n")

describe("README examples against the API (item 15)", () => {
  it("openai(...) is called with the model name first, never an options object", () => {
    expect(code.match(/openai\(\{[^)]*\)/g) ?? []).toEqual([])
  })

  it("every Schedule function named exists in Effect 4", () => {
    const named = new Set([...`${code}\n${policySource}`.matchAll(/Schedule\.([a-zA-Z]+)\(/g)].map((m) => m[1]!))
    expect(named.size).toBeGreaterThan(0)
    expect([...named].filter((name) => typeof (Schedule as Record<string, unknown>)[name] !== "function")).toEqual([])
  })

  it("a .tools({ x }) shorthand names a tool whose name is x", () => {
    const toolNames = new Map([...code.matchAll(/const (\w+) = tool\("([^"]+)"/g)].map((m) => [m[1]!, m[2]!] as const))
    const wrong: Array<string> = []
    for (const [, body] of code.matchAll(/\.tools\(\{([^}]*)\}\)/g)) {
      for (const entry of body!.split(",").map((e) => e.trim())) {
        const name = toolNames.get(entry)
        if (/^\w+$/.test(entry) && name !== undefined && name !== entry) wrong.push(`${entry} (tool "${name}")`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("the retry schedule of the README (exponential, at most 3 retries) retries three times", async () => {
    let calls = 0
    const failing = ModelClient.fromFunction(() => {
      calls++
      return Effect.fail(new ModelError({ provider: "test", reason: "HTTP 503", status: 503, retryable: true }))
    })
    const model = withModelErrorPolicy(failing, ModelErrorPolicy.retry(Schedule.max([Schedule.exponential("1 millis"), Schedule.recurs(3)])))
    await agent("a").model(model).run("x").catch(() => undefined)
    expect(calls).toBe(4)
    const ok = withModelErrorPolicy(ModelClient.fromFunction(() => text("fine")), ModelErrorPolicy.retry(Schedule.max([Schedule.exponential("1 millis"), Schedule.recurs(3)])))
    expect(await agent("b").model(ok).run("x")).toBe("fine")
  })
})
