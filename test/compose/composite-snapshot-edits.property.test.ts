/**
 * Properties of a composite snapshot edited between suspension and resume: a tree of a parallel, a
 * pipeline and an agent used as a tool, whose waiting calls are decided at random and whose JSON is
 * edited at a random place (a value replaced, removed, duplicated or swapped with another). Whatever
 * the edit, the resume ends in a result or a tagged error, never a defect; unedited, a call runs only
 * when approved or edited, with those arguments; signed, every edit that changes the snapshot is
 * refused before anything runs.
 */
import { Cause, Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, Decision, parallel, pipeline, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank, secret } from "../approvals/bank.ts"

const pay = (to: string) => toolCalls([{ id: "k1", name: "transfer", arguments: { to, amount: 500 } }])

/** [ann's bank, prep → front (its `pay` tool runs cid's bank)]; `resumed`: the models go on after the transfers. */
const tree = (options: { readonly resumed: boolean; readonly sign?: string }) => {
  const ann = makeBank(scriptedModel(options.resumed ? [text("ann paid")] : [pay("ann"), text("ann paid")]))
  const cid = makeBank(scriptedModel(options.resumed ? [text("cid paid")] : [pay("cid"), text("cid paid")]))
  const front = agent("front")
    .model(scriptedModel(options.resumed ? [text("front done")] : [toolCalls([{ id: "p1", name: "pay", arguments: { input: "pay cid" } }]), text("front done")]))
    .tools({ pay: cid.bank.asTool({ name: "pay" }) })
  const prep = agent("prep").model(scriptedModel(() => text("pay cid")))
  const base = parallel("tree", [ann.bank, pipeline("chain", prep, front)])
  const composite = (options.sign === undefined ? base : base.signSnapshots(options.sign)) as unknown as {
    runEffect(input: string): Effect.Effect<any, any>
    resume(snapshot: unknown, decisions: object): Effect.Effect<any, any>
  }
  return { composite, executed: () => [...ann.executed, ...cid.executed].filter((e) => e.tool === "transfer").map((e) => e.args) }
}

const ids = ["0/k1", "1/p1/k1"] as const
const recipients: Record<(typeof ids)[number], string> = { "0/k1": "ann", "1/p1/k1": "cid" }

const snapshotOf = async (sign?: string) => {
  const first = await Effect.runPromise(tree({ resumed: false, ...(sign === undefined ? {} : { sign }) }).composite.runEffect("go"))
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  expect(first.pending.map((p: { id: string }) => p.id)).toEqual([...ids])
  return JSON.stringify(first.snapshot)
}

type Choice = { readonly _tag: "approve" } | { readonly _tag: "deny" } | { readonly _tag: "edit"; readonly amount: number } | { readonly _tag: "none" }
const arbChoice: fc.Arbitrary<Choice> = fc.oneof(
  fc.constant({ _tag: "approve" } as const),
  fc.constant({ _tag: "deny" } as const),
  fc.integer({ min: 1, max: 900 }).map((amount) => ({ _tag: "edit", amount }) as const),
  fc.constant({ _tag: "none" } as const)
)
const decisionsOf = (choices: ReadonlyArray<Choice>, extra: string | undefined) => {
  const out: Record<string, unknown> = {}
  choices.forEach((choice, i) => {
    const id = ids[i]!
    if (choice._tag === "approve") out[id] = Decision.approve
    if (choice._tag === "deny") out[id] = Decision.deny("no")
    if (choice._tag === "edit") out[id] = Decision.edit({ to: recipients[id], amount: choice.amount })
  })
  if (extra !== undefined) out[extra] = Decision.approve
  return out
}

/** Every place in a JSON value, as a path of keys. */
const places = (value: unknown, path: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> => {
  const here = [path]
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => places(v, [...path, i]))]
  if (typeof value === "object" && value !== null) return [...here, ...Object.entries(value).flatMap(([k, v]) => places(v, [...path, k]))]
  return here
}
const at = (root: any, path: ReadonlyArray<string | number>) => path.reduce((v, k) => v?.[k], root)

type Edit =
  | { readonly _tag: "replace"; readonly place: number; readonly value: unknown }
  | { readonly _tag: "remove"; readonly place: number }
  | { readonly _tag: "duplicate"; readonly place: number }
  | { readonly _tag: "swap"; readonly place: number; readonly other: number }
const arbEdit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ _tag: fc.constant("replace" as const), place: fc.nat(), value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom("0/k1", "k1", "bank", "transfer", 0, 1, 2)) }),
  fc.record({ _tag: fc.constant("remove" as const), place: fc.nat() }),
  fc.record({ _tag: fc.constant("duplicate" as const), place: fc.nat() }),
  fc.record({ _tag: fc.constant("swap" as const), place: fc.nat(), other: fc.nat() })
)

/** The snapshot text with `edit` applied (a place of the root is never the root itself). */
const edited = (json: string, edit: Edit): unknown => {
  const root = JSON.parse(json)
  const all = places(root).filter((p) => p.length > 0)
  const path = all[edit.place % all.length]!
  const parent = at(root, path.slice(0, -1))
  const key = path.at(-1)!
  switch (edit._tag) {
    case "replace":
      parent[key] = structuredClone(edit.value)
      break
    case "remove":
      if (Array.isArray(parent)) parent.splice(key as number, 1)
      else delete parent[key]
      break
    case "duplicate":
      if (Array.isArray(parent)) parent.splice(key as number, 0, structuredClone(parent[key as number]))
      else parent[key] = structuredClone(at(root, all[(edit.place + 1) % all.length]!))
      break
    case "swap": {
      const otherPath = all[edit.other % all.length]!
      // Swapping a value with one inside it would make a cycle: keep the edit a plain replacement then.
      const nested = otherPath.length > path.length && path.every((k, i) => otherPath[i] === k)
      const mine = structuredClone(parent[key])
      const theirs = structuredClone(at(root, otherPath))
      parent[key] = theirs
      if (!nested) {
        const otherParent = at(root, otherPath.slice(0, -1))
        if (otherParent !== undefined && otherParent !== null) otherParent[otherPath.at(-1)!] = mine
      }
    }
  }
  return root
}

/** A resume's end: a value, or a tagged error; never a defect. */
const typedEnd = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return
  expect(Cause.hasDies(exit.cause)).toBe(false)
  const error = Cause.squash(exit.cause) as { readonly _tag?: unknown }
  expect(typeof error._tag).toBe("string")
}

describe("a composite snapshot edited between suspension and resume", () => {
  it("unedited: a call runs only when approved (its own arguments) or edited (the edit's), once", async () => {
    const json = await snapshotOf()
    await fc.assert(
      fc.asyncProperty(fc.tuple(arbChoice, arbChoice), fc.option(fc.constantFrom("0/k2", "1/p1/k2", "01/k1", "2/k1", "1/k1", "k1", "0/__proto__"), { nil: undefined }), async (choices, extra) => {
        const resumed = tree({ resumed: true })
        const exit = await Effect.runPromise(Effect.exit(resumed.composite.resume(JSON.parse(json), decisionsOf(choices, extra))))
        typedEnd(exit)
        const complete = choices.every((c) => c._tag !== "none") && extra === undefined
        expect(Exit.isSuccess(exit)).toBe(complete)
        const expected = complete
          ? choices.flatMap((c, i) => {
            const to = recipients[ids[i]!]
            return c._tag === "approve" ? [{ to, amount: 500 }] : c._tag === "edit" ? [{ to, amount: c.amount }] : []
          })
          : []
        expect(resumed.executed()).toEqual(expected)
      }),
      { numRuns: 60 }
    )
  })

  it("edited anywhere: the resume ends in a result or a tagged error, never a defect", async () => {
    const json = await snapshotOf()
    await fc.assert(
      fc.asyncProperty(arbEdit, fc.tuple(arbChoice, arbChoice), async (edit, choices) => {
        const resumed = tree({ resumed: true })
        typedEnd(await Effect.runPromise(Effect.exit(resumed.composite.resume(edited(json, edit), decisionsOf(choices, undefined)))))
      }),
      { numRuns: 150 }
    )
  })

  it("signed and edited: any change is refused before anything runs", async () => {
    const json = await snapshotOf(secret)
    await fc.assert(
      fc.asyncProperty(arbEdit, async (edit) => {
        const changed = edited(json, edit)
        fc.pre(JSON.stringify(changed) !== json)
        const resumed = tree({ resumed: true, sign: secret })
        const exit = await Effect.runPromise(Effect.exit(resumed.composite.resume(changed, { "0/k1": Decision.approve, "1/p1/k1": Decision.approve })))
        typedEnd(exit)
        expect(Exit.isFailure(exit)).toBe(true)
        expect(resumed.executed()).toEqual([])
      }),
      { numRuns: 100 }
    )
  })
})
