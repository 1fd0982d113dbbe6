/**
 * The packed package, shared by the package tests: `packedTarball()` runs `npm pack` (which builds
 * dist/ through `prepack`) once per content of what goes into the tarball, and every test file that
 * asks gets the same file. The tarball is kept under node_modules/.cache/effect-agent-dsl-pack/<hash>/,
 * the hash over the sources, the starter, the build script and the manifests, so a change to any of
 * them packs again; a lock directory makes test files running in parallel wait for one pack instead of
 * building dist/ twice at once. `install` puts packages into a project from the npm cache that `npm ci`
 * filled (`--prefer-offline`); `run` runs a command and throws with its output when it fails.
 */
import { execFileSync, type ExecFileSyncOptions } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

export const root = resolve(import.meta.dirname, "../..")

/** The version of a package installed at the root (what the npm cache holds). */
export const version = (name: string): string => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version

/** Runs `command`; its stdout, or an Error with stdout and stderr when it fails. */
export const run = (command: string, args: ReadonlyArray<string>, options: ExecFileSyncOptions = {}): string => {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: "pipe", ...options }) as string
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${command} ${args.join(" ")} failed:\n${e.stdout ?? ""}\n${e.stderr ?? ""}\n${e.message}`)
  }
}

/** `npm install`s `packages` (a tarball path or `name@version`) into the project at `dir`. */
export const install = (dir: string, packages: ReadonlyArray<string>): void => {
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", ...packages], { cwd: dir })
}

/** What the tarball is made from: a change to any of these files packs again. */
const inputs = ["src", "examples/starter", "scripts/build.mjs", "package.json", "package-lock.json", "README.md", "tsconfig.json", "tsconfig.build.json"]

const files = (path: string): ReadonlyArray<string> => {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).sort().flatMap((name) => name === "node_modules" ? [] : files(join(path, name)))
}

const fingerprint = (): string => {
  const hash = createHash("sha256")
  for (const file of inputs.flatMap((input) => files(join(root, input)))) {
    hash.update(`${relative(root, file)}\0`).update(readFileSync(file)).update("\0")
  }
  return hash.digest("hex").slice(0, 16)
}

const cache = join(root, "node_modules/.cache/effect-agent-dsl-pack")
const lock = join(cache, "lock")

const tarballIn = (dir: string): string | undefined => {
  const name = existsSync(dir) ? readdirSync(dir).find((file) => file.endsWith(".tgz")) : undefined
  return name === undefined ? undefined : join(dir, name)
}

/** The path of the packed tarball of the current sources, packing them when nobody has yet. */
export const packedTarball = async (): Promise<string> => {
  const target = join(cache, fingerprint())
  mkdirSync(cache, { recursive: true })
  for (;;) {
    const ready = tarballIn(target)
    if (ready !== undefined) return ready
    try {
      mkdirSync(lock)
    } catch {
      // Another test file is packing; a lock older than 5 minutes belongs to a process that died.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true })
      await sleep(250)
      continue
    }
    try {
      if (tarballIn(target) !== undefined) continue
      const staging = mkdtempSync(join(cache, "staging-"))
      run("npm", ["pack", "--silent", "--pack-destination", staging], { cwd: root })
      for (const old of readdirSync(cache)) if (old !== "lock" && old !== relative(cache, staging)) rmSync(join(cache, old), { recursive: true, force: true })
      renameSync(staging, target)
    } finally {
      rmSync(lock, { recursive: true, force: true })
    }
  }
}
