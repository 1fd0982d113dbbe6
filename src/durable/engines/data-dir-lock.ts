/**
 * One backend per data directory. PGlite is a single PostgreSQL backend inside the process: two
 * processes (or two engines of one process) opening the same files would corrupt them. The lock is a
 * file holding its owner's pid (only that, as every earlier version wrote and reads it), put in place
 * whole and atomically (written aside, then hard-linked to its name: no process ever reads a
 * half-written lock). A lock whose owner is gone (a crashed worker, or its pid now another process's,
 * started after the lock was written) is taken over, so a restart after SIGKILL needs no cleanup. A
 * lock holding this process's own pid is stale too (a container restarted with the same pid) unless
 * this process holds it now: the directories it holds are kept in a registry shared by every copy of
 * this module.
 *
 * Taking over is safe when two processes start at once on a stale lock: a process moves the stale
 * lock aside (`rename`, which only one of them can do to that file) and removes it only if it is
 * still the very lock it judged stale; a lock another process put in place meanwhile is put back. Then
 * each tries to create the lock again, and exactly one succeeds.
 *
 * On Linux the kernel arbitrates first: before the file, a process binds a listening socket in the
 * abstract namespace named after the directory's real path. Binding is atomic, and the kernel lets
 * go of the name when its process ends, however it ends (SIGKILL included): processes of one network
 * namespace never race on the file (three starting within the same microseconds, or a kill between
 * a takeover's move and put-back, could otherwise leave a live owner without its file). Across
 * network namespaces (containers sharing a volume), and where the socket cannot be bound, the file
 * lock alone decides.
 */
import { createHash, randomUUID } from "node:crypto"
import { linkSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EngineUnavailable } from "./engine-unavailable.ts"
import { isProcessAlive } from "../../internal/process-alive.ts"

/** When the system booted (ms since the epoch, `/proc/stat`'s `btime`), read once; undefined where it cannot be read. */
let bootMs: number | undefined | null = null
const bootTime = (): number | undefined => {
  if (bootMs === null) {
    try {
      const line = readFileSync("/proc/stat", "utf8").split("\n").find((l) => l.startsWith("btime "))
      bootMs = line === undefined ? undefined : Number(line.slice(6)) * 1000
    } catch {
      bootMs = undefined
    }
  }
  return bootMs
}

/**
 * When a process started (ms since the epoch), from `/proc/<pid>/stat` (field 22, in clock ticks since
 * boot; Linux's USER_HZ is 100 everywhere it runs), or undefined where it cannot be read.
 */
const startedAt = (pid: number): number | undefined => {
  const boot = bootTime()
  if (boot === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ")".
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19])
    return Number.isFinite(ticks) ? boot + ticks * 10 : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the owner a lock names may still be alive: `content` is its pid (all the lock holds, so that
 * every version of this module reads it), `writtenAt` when the lock was written (its mtime). A live pid
 * whose process started after the lock was written (more than the clocks' slack) is another process
 * that was given the same pid: the lock is stale. This very pid is never alive here (see the module
 * header).
 */
export const lockOwnerAlive = (content: string, writtenAt: number): boolean => {
  const pid = Number(content.trim())
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isProcessAlive(pid)) return false
  const started = startedAt(pid)
  return started === undefined || started <= writtenAt + 2_000
}

/** Creates `file` holding `content`, whole, or answers false when it exists. */
const create = (file: string, content: string): boolean => {
  const aside = `${file}.${process.pid}.${randomUUID()}`
  writeFileSync(aside, content, { flag: "wx" })
  try {
    linkSync(aside, file)
    return true
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "EEXIST") return false
    // A file system without hard links: an exclusive create (a reader may then see it before its pid is written).
    try {
      writeFileSync(file, content, { flag: "wx" })
      return true
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === "EEXIST") return false
      throw e
    }
  } finally {
    rmSync(aside, { force: true })
  }
}

/** When `file` was last written (its mtime, ms); now when it cannot be read (then no start time is "after" it). */
const writtenAt = (file: string): number => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return Date.now()
  }
}

const readLock = (file: string): string | undefined => {
  try {
    return readFileSync(file, "utf8")
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw e
  }
}

/**
 * Removes the lock `file` if it still holds `stale` (what its reader judged dead), and only then: the
 * lock is moved aside first (`rename`: of two processes moving the same file, one succeeds), and a
 * lock that is not the stale one (another process took over in between) is put back. Answers whether
 * the stale lock is gone.
 */
export const removeStaleLock = (file: string, stale: string): boolean => {
  const aside = `${file}.stale.${process.pid}.${randomUUID()}`
  try {
    renameSync(file, aside)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return true // gone already: someone else removed it
    throw e
  }
  const moved = readLock(aside)
  if (moved === stale) {
    rmSync(aside, { force: true })
    return true
  }
  // Another process's lock, taken over since it was read: back where it was.
  try {
    linkSync(aside, file)
  } catch {
    // A third process made a lock in the moment this one was away: that lock stays. (Three processes
    // starting on one stale lock within microseconds; the one that made it wins.)
  }
  rmSync(aside, { force: true })
  return false
}

/** The lock files this process holds (shared by every copy of this module in the process). */
const held: Set<string> = ((globalThis as Record<symbol, unknown>)[Symbol.for("effect-agent-dsl/data-dir-locks")] ??= new Set<string>()) as Set<string>

/** The lock file of `dataDir` (created if missing), refused when this process holds it already. */
const lockFileOf = (dataDir: string): string => {
  mkdirSync(dataDir, { recursive: true })
  const file = resolve(join(dataDir, "engine.lock"))
  if (held.has(file)) {
    throw new EngineUnavailable({ engine: "embedded", reason: `${dataDir} is open in this process already (one engine per data directory: share its layer)` })
  }
  return file
}

const inUse = (dataDir: string, owner: string | undefined) =>
  new EngineUnavailable({
    engine: "embedded",
    reason: `${dataDir} is in use by ${owner === undefined || owner.trim() === "" ? "another process" : `process ${owner.trim()}`} (one process per data directory)`
  })

/**
 * The kernel's half of the lock (Linux): a socket listening in the abstract namespace under a name
 * made from the directory's real path; the kernel frees it when the process ends. Undefined on other
 * systems or when it cannot be bound for another reason than its being taken (the file lock decides
 * then); `EngineUnavailable` when another process holds it.
 */
const holdKernelLock = (dataDir: string, file: string): Effect.Effect<Server | undefined, EngineUnavailable> => {
  if (process.platform !== "linux") return Effect.succeed(undefined)
  let name: string
  try {
    name = `\0effect-agent-dsl/embedded/${createHash("sha256").update(realpathSync(dataDir)).digest("hex")}`
  } catch {
    return Effect.succeed(undefined) // its real path cannot be read: the file lock decides
  }
  return Effect.callback<Server | undefined, EngineUnavailable>((resume) => {
    const server = createServer()
    server.once("error", (e: NodeJS.ErrnoException) => {
      resume(e.code === "EADDRINUSE" ? Effect.fail(inUse(dataDir, readLockQuietly(file))) : Effect.succeed(undefined))
    })
    server.listen(name, () => {
      // Holding the name must not keep the process alive.
      server.unref()
      resume(Effect.succeed(server))
    })
  })
}

const readLockQuietly = (file: string): string | undefined => {
  try {
    return readLock(file)
  } catch {
    return undefined
  }
}

const lock = (dataDir: string, file: string): { readonly file: string; readonly content: string } => {
  const content = String(process.pid)
  for (let attempt = 0; attempt < 5; attempt++) {
    if (create(file, content)) {
      held.add(file)
      return { file, content }
    }
    const owner = readLock(file)
    if (owner === undefined) continue // released meanwhile
    if (lockOwnerAlive(owner, writtenAt(file))) throw inUse(dataDir, owner)
    removeStaleLock(file, owner)
  }
  throw new EngineUnavailable({ engine: "embedded", reason: `could not lock ${dataDir}: other processes keep taking it` })
}

const asUnavailable = (cause: unknown) =>
  cause instanceof EngineUnavailable ? cause : new EngineUnavailable({ engine: "embedded", reason: String(cause), cause })

/**
 * Holds `dataDir` while the layer is open (the kernel's socket on Linux, then `dataDir/engine.lock`);
 * fails when a live process, or another engine of this one, holds it.
 *
 * @example
 * ```ts
 * const locked = engineLayer.pipe(Layer.provide(dataDirLock("./data"))) // as embeddedEngine does
 * ```
 */
export const dataDirLock = (dataDir: string): Layer.Layer<never, EngineUnavailable> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const file = yield* Effect.try({ try: () => lockFileOf(dataDir), catch: asUnavailable })
    yield* Effect.acquireRelease(holdKernelLock(dataDir, file), (server) =>
      // Let go once the name is free again: an engine opened next on this directory binds it at once.
      server === undefined ? Effect.void : Effect.callback<void>((resume) => void server.close(() => resume(Effect.void))))
    yield* Effect.acquireRelease(
      Effect.try({ try: () => lock(dataDir, file), catch: asUnavailable }),
      ({ file, content }) => Effect.sync(() => {
        held.delete(file)
        // Only this process's own lock is removed.
        if (readLock(file) === content) rmSync(file, { force: true })
      })
    )
  }))
