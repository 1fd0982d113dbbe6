/** The engines' start-up refusals: a data directory held by a live process, a runner without an address. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { EngineUnavailable, postgresRunner } from "../../src/durable/postgres.ts"
import { dataDirLock } from "../../src/durable/engines/data-dir-lock.ts"

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "engine-lock-"))
  dirs.push(dir)
  return dir
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })))

const build = <A, E>(layer: Layer.Layer<A, E>) => Effect.runPromiseExit(Effect.scoped(Layer.build(layer)))

describe("one process per data directory", () => {
  it("refuses a directory whose lock holds a live pid, and names it", async () => {
    const dir = tempDir()
    writeFileSync(join(dir, "engine.lock"), String(process.ppid))
    const exit = await build(dataDirLock(dir))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
    expect(String((error as { error?: unknown })?.error)).toContain(`in use by process ${process.ppid}`)
  })

  it("takes over the lock of a dead process (a crashed worker) and removes it when closed", async () => {
    const dir = tempDir()
    writeFileSync(join(dir, "engine.lock"), "999999999")
    const seen = await Effect.runPromise(Effect.scoped(Effect.map(Layer.build(dataDirLock(dir)), () => readFileSync(join(dir, "engine.lock"), "utf8"))))
    expect(seen).toBe(String(process.pid))
    expect(() => readFileSync(join(dir, "engine.lock"))).toThrow()
  })

  it("refuses a second engine on a directory this process holds; a lock with this pid it does not hold is stale (a restarted container)", async () => {
    const dir = tempDir()
    const second = await Effect.runPromise(Effect.scoped(Effect.andThen(Layer.build(dataDirLock(dir)), () => Effect.exit(Layer.build(dataDirLock(dir))))))
    expect(Exit.isFailure(second)).toBe(true)
    expect(String(Exit.isFailure(second) ? (second.cause.reasons[0] as { error?: unknown })?.error : "")).toContain("open in this process already")
    // Released: open again, and a lock left with this very pid (not held) is taken over.
    writeFileSync(join(dir, "engine.lock"), String(process.pid))
    expect(Exit.isSuccess(await build(dataDirLock(dir)))).toBe(true)
  })
})

it("refuses a PostgreSQL runner without an address", async () => {
  const exit = await build(postgresRunner({ url: "postgres://nowhere/none" }))
  expect(Exit.isFailure(exit) && exit.cause.reasons.some((r) => "error" in r && r.error instanceof EngineUnavailable)).toBe(true)
})
