/** The engines' start-up refusals: a data directory held by a live process, a runner without an address. */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { EngineUnavailable, postgresRunner } from "../../src/durable/postgres.ts"
import { dataDirLock, lockOwnerAlive, removeStaleLock } from "../../src/durable/engines/data-dir-lock.ts"

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

  it("a stale lock is removed only while it is still the stale one: a lock another process put in place meanwhile stays", () => {
    const dir = tempDir()
    const file = join(dir, "engine.lock")
    // This process read "999999999" (dead) from the lock; meanwhile a live process took it over.
    writeFileSync(file, String(process.ppid))
    expect(removeStaleLock(file, "999999999")).toBe(false)
    expect(readFileSync(file, "utf8")).toBe(String(process.ppid))
    // Still the stale one: removed.
    writeFileSync(file, "999999999")
    expect(removeStaleLock(file, "999999999")).toBe(true)
    expect(existsSync(file)).toBe(false)
  })

  it.skipIf(!existsSync("/proc/self/stat"))("a live pid that started after the lock was written is another process (pid reused): the lock is stale", async () => {
    expect(lockOwnerAlive(String(process.ppid), Date.now())).toBe(true)
    expect(lockOwnerAlive(String(process.ppid), 0)).toBe(false)
    const dir = tempDir()
    const file = join(dir, "engine.lock")
    writeFileSync(file, String(process.ppid))
    utimesSync(file, 1, 1) // written long before the live process with that pid started
    expect(Exit.isSuccess(await build(dataDirLock(dir)))).toBe(true)
  })

  it("processes starting together on a stale lock: exactly one holds it", async () => {
    const dir = tempDir()
    writeFileSync(join(dir, "engine.lock"), "999999999")
    const racer = join(import.meta.dirname, "fixtures", "lock-racer.ts")
    const startAt = Date.now() + 2500
    const racers = Array.from({ length: 3 }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", racer], {
        env: { ...process.env, DATA_DIR: dir, START_AT: String(startAt) },
        stdio: ["pipe", "pipe", "inherit"]
      })
      const answer = new Promise<string>((resolve) => {
        let out = ""
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString()
          if (out.includes("\n")) resolve(out.trim())
        })
        child.on("close", () => resolve(out.trim()))
      })
      return { child, answer, closed: new Promise((resolve) => child.on("close", resolve)) }
    })
    // Every contender has tried while the winner holds the lock; then they let go.
    const answers = await Promise.all(racers.map((r) => r.answer))
    racers.forEach((r) => r.child.stdin.end())
    await Promise.all(racers.map((r) => r.closed))
    expect(answers.filter((a) => a === "HELD")).toHaveLength(1)
    expect(answers.filter((a) => a === "REFUSED")).toHaveLength(2)
  }, 30_000)

  it.runIf(process.platform === "linux")("a live holder whose lock file was lost (a takeover race's worst case) still keeps the directory; SIGKILLed, it frees it at once", async () => {
    const dir = tempDir()
    const holder = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "fixtures", "lock-racer.ts")], {
      env: { ...process.env, DATA_DIR: dir, START_AT: "0" },
      stdio: ["pipe", "pipe", "inherit"]
    })
    const exited = new Promise((resolve) => holder.on("close", resolve))
    try {
      const said = await new Promise<string>((resolve) => holder.stdout.on("data", (chunk: Buffer) => resolve(chunk.toString().trim())))
      expect(said).toBe("HELD")
      // What three processes racing on a stale lock within microseconds could leave: the owner alive, its file gone.
      rmSync(join(dir, "engine.lock"))
      const refused = await build(dataDirLock(dir))
      expect(Exit.isFailure(refused) && refused.cause.reasons.some((r) => "error" in r && r.error instanceof EngineUnavailable && /in use by another process/.test(r.error.reason))).toBe(true)
      // The file is back with a pid (this time a dead one's, as a SIGKILLed worker leaves it): the kernel decides.
      writeFileSync(join(dir, "engine.lock"), "999999999")
      holder.kill("SIGKILL")
      await exited
      expect(Exit.isSuccess(await build(dataDirLock(dir)))).toBe(true)
    } finally {
      holder.kill("SIGKILL")
      await exited
    }
  }, 30_000)
})

it("refuses a PostgreSQL runner without an address", async () => {
  const exit = await build(postgresRunner({ url: "postgres://nowhere/none" }))
  expect(Exit.isFailure(exit) && exit.cause.reasons.some((r) => "error" in r && r.error instanceof EngineUnavailable)).toBe(true)
})

it("refuses what a plain caller or an unset variable hands a PostgreSQL runner, naming the field, before it connects", async () => {
  const refusal = async (options: unknown): Promise<string> => {
    const exit = await build(postgresRunner(options as Parameters<typeof postgresRunner>[0]))
    const error = Exit.isFailure(exit) ? exit.cause.reasons.map((r) => ("error" in r ? r.error : undefined)).find((e) => e instanceof EngineUnavailable) : undefined
    expect(error).toBeInstanceOf(EngineUnavailable)
    return (error as EngineUnavailable).message
  }
  expect(await refusal({ url: "postgres://nowhere/none", runnerAddress: { host: undefined, port: 34431 } })).toMatch(/runnerAddress\.host must be a host name or address, got undefined/)
  expect(await refusal({ url: "postgres://nowhere/none", runnerAddress: { host: "10.0.0.5", port: "34431" } })).toMatch(/runnerAddress\.port must be a TCP port .*got "34431"/)
  expect(await refusal({ url: "postgres://nowhere/none", clientOnly: true, listenAddress: { host: "0.0.0.0", port: 70_000 } })).toMatch(/listenAddress\.port .*got 70000/)
  expect(await refusal({ url: undefined, clientOnly: true })).toMatch(/url must be a PostgreSQL URL .*got undefined/)
})
