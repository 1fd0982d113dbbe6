/**
 * A store directory damaged outside the engine: one that holds files but no `PG_VERSION` (a partial
 * copy or restore) is refused with `EngineUnavailable`, never opened as a new, empty database over the
 * old files (its runs gone, a finished run's mutating call then run again under the same run id); a
 * first initialisation killed before PGlite wrote `PG_VERSION` (never marked initialised) is
 * initialised again; a `pg` that is a file is refused saying what the file system said, never
 * "[object Object]".
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { durable } from "../../src/durable/index.ts"
import { embeddedEngine, EngineUnavailable } from "../../src/durable/embedded.ts"
import { refuseIncompleteDatabase } from "../../src/durable/engines/pglite-client.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "incomplete-store-"))
  dirs.push(dir)
  return dir
}

/** The engine's layer built and closed again: its failure, if it failed. */
const openFailure = async (dataDir: string): Promise<unknown> => {
  const exit = await Effect.runPromiseExit(Effect.scoped(Layer.build(embeddedEngine({ dataDir }))))
  return Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
}

describe("a store directory damaged outside the engine", () => {
  it("without PG_VERSION: refused, its files left as they were, and the finished run's payment not made again", async () => {
    const dir = freshDir()
    let payments = 0
    const pay = tool("pay", { args: Schema.Struct({}), effect: "mutating", run: () => `paid ${++payments}` })
    const d = durable(agent("orders").model(scriptedModel([toolCalls([{ id: "c1", name: "pay", arguments: {} }]), text("done")])).tools({ pay }))
    const run = Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(d.layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir: dir }))))
      return yield* d.run("go", { runId: "order-42" }).pipe(Effect.provide(context))
    }))
    expect(await Effect.runPromise(run)).toEqual({ _tag: "Completed", output: "done" })
    expect(payments).toBe(1)
    expect(existsSync(join(dir, "pg.initialized"))).toBe(true)
    rmSync(join(dir, "pg", "PG_VERSION"))
    const before = readdirSync(join(dir, "pg")).sort()
    const failure = await openFailure(dir)
    expect(failure).toBeInstanceOf(EngineUnavailable)
    expect((failure as EngineUnavailable).message).toMatch(/holds files but no PG_VERSION: it is not a whole PGlite database .* restore the whole directory, or move it away/)
    expect(readdirSync(join(dir, "pg")).sort()).toEqual(before)
    expect(existsSync(join(dir, "pg", "PG_VERSION"))).toBe(false)
    expect(payments).toBe(1)
  }, 120_000)

  it("an empty directory is a new store", async () => {
    expect(await openFailure(freshDir())).toBeUndefined()
  }, 120_000)

  it("a mark left of a database moved away is let go: the next first initialisation, if killed, is not refused for it", async () => {
    const dir = freshDir()
    const pg = join(dir, "pg")
    writeFileSync(join(dir, "pg.initialized"), "of a database moved away")
    await refuseIncompleteDatabase(pg) // no pg: a new database
    expect(existsSync(join(dir, "pg.initialized"))).toBe(false)
    for (const sub of ["base", "global"]) mkdirSync(join(pg, sub), { recursive: true })
    await expect(refuseIncompleteDatabase(pg)).resolves.toBeUndefined()
    writeFileSync(join(dir, "pg.initialized"), "initialised")
    await expect(refuseIncompleteDatabase(pg)).rejects.toThrow(/holds files but no PG_VERSION/)
  })

  it("a first initialisation that did not finish (files, no PG_VERSION, never marked initialised) is initialised again", async () => {
    const dir = freshDir()
    // What PGlite has written a second before PG_VERSION, when its process is killed then.
    for (const sub of ["base", "global", "pg_wal"]) mkdirSync(join(dir, "pg", sub), { recursive: true })
    writeFileSync(join(dir, "pg", "pg_hba.conf"), "")
    expect(await openFailure(dir)).toBeUndefined()
    expect(existsSync(join(dir, "pg", "PG_VERSION"))).toBe(true)
    expect(existsSync(join(dir, "pg.initialized"))).toBe(true)
  }, 120_000)

  it("a `pg` that is a file: refused with what the file system said", async () => {
    const dir = freshDir()
    writeFileSync(join(dir, "pg"), "not a directory")
    const failure = await openFailure(dir)
    expect(failure).toBeInstanceOf(EngineUnavailable)
    expect((failure as EngineUnavailable).message).not.toContain("[object Object]")
  }, 120_000)
})
