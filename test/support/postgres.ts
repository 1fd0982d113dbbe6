/**
 * PostgreSQL for the tests that need a real database. In CI, `.ci/run` starts one and exports
 * DATABASE_URL; without it, `startPostgres()` starts a throwaway cluster the same way (127.0.0.1,
 * trust auth, `fsync=off`) from the server binaries it finds (Debian's /usr/lib/postgresql, else
 * `pg_config --bindir`, else `initdb` on the PATH, as Homebrew and most packages install them) and
 * `stop()` removes it. Each caller gets its own database, so suites running in parallel never share
 * tables. `postgresAvailable()` says whether either is there; test/support/database.ts falls back to
 * the embedded engine (PGlite) when not.
 */
import { execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

export interface TestPostgres {
  /** A connection URL to a fresh database of this caller. */
  readonly url: string
  /** Drops the database, and stops the cluster when this call started it. */
  readonly stop: () => void
}

const output = (command: string, args: ReadonlyArray<string>): string | undefined => {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: "pipe" }).trim()
  } catch {
    return undefined
  }
}

/** The directory of PostgreSQL's server binaries (`initdb`, `pg_ctl`), or undefined. */
const findBinDir = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(a) - Number(b)) : []
  const last = versions.at(-1)
  if (last !== undefined && existsSync(join(root, last, "bin", "initdb"))) return join(root, last, "bin")
  const fromConfig = output("pg_config", ["--bindir"])
  if (fromConfig !== undefined && existsSync(join(fromConfig, "initdb"))) return fromConfig
  const initdb = output("sh", ["-c", "command -v initdb"])
  return initdb === undefined || initdb === "" ? undefined : dirname(initdb)
}

const binDir = (): string => {
  const found = findBinDir()
  if (found === undefined) throw new Error("PostgreSQL is not installed: run `apt-get install -y postgresql` (.ci/run does), or set DATABASE_URL")
  return found
}

/**
 * Whether a PostgreSQL is at hand: DATABASE_URL, or server binaries to start a throwaway cluster with.
 * `TEST_DATABASE=pglite` answers no, to run the suite as on a machine without PostgreSQL.
 */
export const postgresAvailable = (): boolean =>
  process.env.TEST_DATABASE !== "pglite" && (process.env.DATABASE_URL !== undefined || findBinDir() !== undefined)

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

const isRoot = typeof process.getuid === "function" && process.getuid() === 0
const asPostgres = (command: string, args: ReadonlyArray<string>) =>
  isRoot ? execFileSync("runuser", ["-u", "postgres", "--", command, ...args], { stdio: "pipe" }) : execFileSync(command, args, { stdio: "pipe" })

const psql = (url: string, sql: string) => execFileSync("psql", [url, "-Atqc", sql], { stdio: "pipe" })

/** A database for this caller, on CI's cluster or on one started here. */
export const startPostgres = async (): Promise<TestPostgres> => {
  let serverUrl = process.env.DATABASE_URL
  let stopCluster = () => {}
  if (serverUrl === undefined) {
    const bin = binDir()
    const data = mkdtempSync(join(tmpdir(), "test-postgres-"))
    if (isRoot) {
      const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
      const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
      chownSync(data, uid, gid)
    }
    const port = await freePort()
    asPostgres(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres"])
    asPostgres(join(bin, "pg_ctl"), ["-D", data, "-l", join(data, "server.log"), "-w", "-o", `-c listen_addresses=127.0.0.1 -p ${port} -k ${data} -c fsync=off`, "start"])
    serverUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
    stopCluster = () => {
      try {
        asPostgres(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"])
      } finally {
        rmSync(data, { recursive: true, force: true })
      }
    }
  }
  const database = `test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  psql(serverUrl, `create database ${database}`)
  const url = serverUrl.replace(/\/[^/]*$/, `/${database}`)
  return {
    url,
    stop: () => {
      try {
        psql(serverUrl!, `drop database if exists ${database} with (force)`)
      } finally {
        stopCluster()
      }
    }
  }
}
