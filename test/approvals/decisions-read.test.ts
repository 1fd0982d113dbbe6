/**
 * Decisions from plain JavaScript that throw when read (a getter, a proxy trap) are `DecisionsInvalid`
 * naming what could not be read, before anything runs, never an untyped defect (outside tester, s20);
 * as a snapshot that throws when read is `SnapshotInvalid`. Agents, agents used as tools, composites.
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type Decisions, parallel, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank } from "./bank.ts"

const transferCall = toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }])

const suspendedBank = async () => {
  const made = makeBank(scriptedModel([transferCall, text("done")]))
  const first = await made.bank.run("pay bob")
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return { ...made, first }
}

const boom = (what: string) => () => {
  throw new Error(`${what} boom`)
}

/** The tester's four shapes, and a few more traps. */
const hostile: ReadonlyArray<readonly [string, () => unknown, string]> = [
  ["a getter on the decisions", () => Object.defineProperty({}, "c1", { enumerable: true, get: boom("getter") }), "c1"],
  ["a getter on _tag", () => ({ c1: { get _tag() { return boom("tag")() } } }), "c1"],
  ["a proxy whose ownKeys throws", () => new Proxy({}, { ownKeys: boom("ownKeys") }), "*"],
  ["a getter on an edit's args", () => ({ c1: { _tag: "Edit", get args() { return boom("args")() } } }), "c1"],
  ["a getter on a denial's reason", () => ({ c1: { _tag: "Deny", get reason() { return boom("reason")() } } }), "c1"],
  ["a proxy decision whose has throws", () => ({ c1: new Proxy({}, { has: boom("has") }) }), "c1"],
  ["a proxy whose getOwnPropertyDescriptor throws", () => new Proxy({ c1: Decision.approve }, { getOwnPropertyDescriptor: boom("descriptor") }), "*"]
]

describe("decisions that throw when read", () => {
  for (const [label, make, toolCallId] of hostile) {
    it(`${label}: DecisionsInvalid naming what could not be read, nothing runs`, async () => {
      const { bank, executed, first } = await suspendedBank()
      const exit = await runExit(bank.resume(first.snapshot, make() as Decisions))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(false)
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "DecisionsInvalid", agent: "bank", toolCallId })
      expect((error as { readonly reason: string }).reason).toMatch(/could not be read \(\w+ boom\)/)
      expect(executed).toEqual([])
      // The promise rejects with the same tagged error.
      await expect(Effect.runPromise(bank.resume(first.snapshot, make() as Decisions))).rejects.toMatchObject({ _tag: "DecisionsInvalid" })
    })
  }

  it("a composite: the decisions object throwing, or a member's decision, is DecisionsInvalid, nothing runs", async () => {
    const a = makeBank(scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("a")]))
    const b = makeBank(scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { to: "eve", amount: 700 } }]), text("b")]))
    const flow = parallel("payments", [a.bank, b.bank])
    const first = await flow.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [new Proxy({}, { ownKeys: boom("ownKeys") }), "*"],
      [Object.defineProperty({ "0/k1": Decision.approve }, "1/k1", { enumerable: true, get: boom("getter") }), "1/k1"],
      [{ "0/k1": Decision.approve, "1/k1": { get _tag() { return boom("tag")() } } }, "1/k1"],
      [null, "*"]
    ]
    for (const [decisions, toolCallId] of cases) {
      const exit = await runExit(flow.resume(first.snapshot, decisions as Decisions))
      expect(failureOf(exit)).toMatchObject({ _tag: "DecisionsInvalid", toolCallId })
    }
    expect([...a.executed, ...b.executed]).toEqual([])
  })

  it("an agent used as a tool: a throwing decision for the child's call is refused under the caller's id", async () => {
    const child = makeBank(scriptedModel([toolCalls([{ id: "k", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("child done")]))
    const parent = agent("parent").model(scriptedModel([toolCalls([{ id: "p", name: "sub", arguments: { input: "x" } }]), text("done")]))
      .tools({ sub: child.bank.asTool({ name: "sub" }) })
    const first = await parent.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["p/k"])
    const exit = await runExit(parent.resume(first.snapshot, { "p/k": { _tag: "Edit", get args() { return boom("args")() } } } as unknown as Decisions))
    expect(failureOf(exit)).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "p/k" })
    expect(child.executed).toEqual([])
  })

  /** A value whose reading may throw anywhere: a proxy over `target` whose traps throw where `traps` says. */
  const trapped = (target: object, traps: ReadonlyArray<"get" | "has" | "ownKeys" | "getOwnPropertyDescriptor">) =>
    new Proxy(target, Object.fromEntries(traps.map((trap) => [trap, boom(trap)])))

  test.prop(
    [
      fc.constantFrom("approve", "deny", "edit"),
      fc.subarray(["get", "has", "ownKeys", "getOwnPropertyDescriptor"] as const),
      fc.subarray(["get", "has", "ownKeys", "getOwnPropertyDescriptor"] as const),
      fc.boolean()
    ],
    { numRuns: 40 }
  )("any trap on the decisions or the decision: a typed outcome (never a defect), and no transfer without a readable approve or edit", async (kind, outer, inner, wrapDecision) => {
    const { bank, executed, first } = await suspendedBank()
    const decision = kind === "approve" ? Decision.approve : kind === "deny" ? Decision.deny("no") : Decision.edit({ to: "bob", amount: 5 })
    const decisions = trapped({ c1: wrapDecision ? trapped({ ...decision }, inner) : decision }, outer)
    const exit = await runExit(bank.resume(first.snapshot, decisions as Decisions))
    if (Exit.isFailure(exit)) {
      expect(Cause.hasDies(exit.cause)).toBe(false)
      expect(failureOf(exit)).toMatchObject({ _tag: "DecisionsInvalid" })
      expect(executed).toEqual([])
    } else {
      expect(executed.length).toBe(kind === "deny" ? 0 : 1)
    }
  })
})
