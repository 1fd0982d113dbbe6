/**
 * One process per data directory. PGlite is a single PostgreSQL backend inside the process: two
 * processes opening the same files would corrupt them. The lock is a file holding the owner's pid,
 * created exclusively; a lock whose pid is dead (a crashed worker) is taken over, so a restart after
 * SIGKILL needs no cleanup.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
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

/** Holds `dataDir/engine.lock` while the layer is open; fails when a live process holds it. */
export const dataDirLock = (dataDir: string): Layer.Layer<never, EngineUnavailable> =>
  Layer.effectDiscard(Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true })
        const file = join(dataDir, "engine.lock")
        for (let attempt = 0; attempt < 2; attempt++) {
          const owner = tryLock(file)
          if (owner === undefined) return file
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
    (file) => Effect.sync(() => rmSync(file, { force: true }))
  ))
