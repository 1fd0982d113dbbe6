/**
 * One backend per data directory. PGlite is a single PostgreSQL backend inside the process: two
 * processes (or two engines of one process) opening the same files would corrupt them. The lock is a
 * file holding the owner's pid, created exclusively; a lock whose pid is dead (a crashed worker) is
 * taken over, so a restart after SIGKILL needs no cleanup. A lock holding this process's own pid is
 * stale too (a container restarted with the same pid) unless this process holds it now: the
 * directories it holds are kept in a registry shared by every copy of this module.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { EngineUnavailable } from "./engine-unavailable.ts"
import { isProcessAlive } from "../../internal/process-alive.ts"


const tryLock = (file: string): number | undefined => {
  try {
    writeFileSync(file, String(process.pid), { flag: "wx" })
    return undefined
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    const owner = Number(readFileSync(file, "utf8").trim())
    return Number.isInteger(owner) && owner > 0 ? owner : -1
  }
}

/** The lock files this process holds (shared by every copy of this module in the process). */
const held: Set<string> = ((globalThis as Record<symbol, unknown>)[Symbol.for("effect-agent-dsl/data-dir-locks")] ??= new Set<string>()) as Set<string>

/** Holds `dataDir/engine.lock` while the layer is open; fails when a live process, or another engine of this one, holds it. */
export const dataDirLock = (dataDir: string): Layer.Layer<never, EngineUnavailable> =>
  Layer.effectDiscard(Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true })
        const file = resolve(join(dataDir, "engine.lock"))
        if (held.has(file)) {
          throw new EngineUnavailable({ engine: "embedded", reason: `${dataDir} is open in this process already (one engine per data directory: share its layer)` })
        }
        for (let attempt = 0; attempt < 2; attempt++) {
          const owner = tryLock(file)
          if (owner === undefined) {
            held.add(file)
            return file
          }
          if (owner !== process.pid && owner > 0 && isProcessAlive(owner)) {
            throw new EngineUnavailable({ engine: "embedded", reason: `${dataDir} is in use by process ${owner} (one process per data directory)` })
          }
          rmSync(file, { force: true }) // stale: its process is gone
        }
        throw new EngineUnavailable({ engine: "embedded", reason: `could not lock ${dataDir}` })
      },
      catch: (cause) =>
        cause instanceof EngineUnavailable ? cause : new EngineUnavailable({ engine: "embedded", reason: String(cause), cause })
    }),
    (file) => Effect.sync(() => {
      held.delete(file)
      rmSync(file, { force: true })
    })
  ))
