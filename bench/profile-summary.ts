/**
 * Summarises V8 CPU profiles (`node --cpu-prof`) by self time: per package (effect, ours by folder, node
 * internals, GC) and per file, as shares of all samples. Frames in our bundled `dist/` are mapped back
 * to their `src/` file and line through the bundle's source maps.
 * Usage: tsx bench/profile-summary.ts <file.cpuprofile | directory of them (the newest is read)> [top files]
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { SourceMap } from "node:module"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const target = process.argv[2] ?? "bench/profiles"
const top = Number(process.argv[3] ?? 15)
const file = statSync(target).isDirectory()
  ? readdirSync(target).filter((f) => f.endsWith(".cpuprofile")).map((f) => join(target, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  : target
if (file === undefined) throw new Error(`no .cpuprofile in ${target}`)
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile

/** The bucket a frame's self time goes to: a package, our folder, node's internals, or a V8 pseudo-frame. */
const packageOf = (url: string, fn: string): string => {
  if (url === "") return fn.startsWith("(") ? fn : "(native)"
  if (url.startsWith("node:")) return "node internals"
  const modules = url.lastIndexOf("/node_modules/")
  if (modules !== -1) {
    const rest = url.slice(modules + 14).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  const ours = url.match(/\/(dist|src)\/(.*)$/)
  if (ours !== null) return `ours: ${ours[2]!.includes("/") ? ours[2]!.split("/")[0] + "/" : ours[2]}`
  if (url.includes("/bench/")) return "bench harness (mocks, tools)"
  return "other"
}
const fileOf = (url: string, fn: string): string => {
  if (url === "") return fn
  const modules = url.lastIndexOf("/node_modules/")
  if (modules !== -1) return url.slice(modules + 14)
  const ours = url.match(/\/((dist|src|bench)\/.*)$/)
  return ours !== null ? ours[1]! : url
}

/** The bundle's source maps, by file URL (undefined when a file has none). */
const maps = new Map<string, SourceMap | undefined>()
const sourceMapOf = (url: string): SourceMap | undefined => {
  if (!url.startsWith("file:") || !url.includes("/dist/")) return undefined
  if (!maps.has(url)) {
    const path = `${fileURLToPath(url)}.map`
    maps.set(url, existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, "utf8"))) : undefined)
  }
  return maps.get(url)
}
/** A frame of our bundle as its source file URL and line (0-based), else as it is. */
const original = (frame: ProfileNode["callFrame"]): ProfileNode["callFrame"] => {
  const map = sourceMapOf(frame.url)
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number } | undefined
  if (entry?.originalSource === undefined) return frame
  const source = entry.originalSource.startsWith("file:") ? entry.originalSource : `file://${resolve(fileURLToPath(frame.url), "..", entry.originalSource)}`
  return { ...frame, url: source, lineNumber: entry.originalLine ?? frame.lineNumber }
}

const byId = new Map(profile.nodes.map((n) => [n.id, { ...n, callFrame: original(n.callFrame) }]))
const perPackage = new Map<string, number>()
const perFile = new Map<string, number>()
const perFunction = new Map<string, number>()
let total = 0
profile.samples.forEach((id, index) => {
  const node = byId.get(id)!
  const dt = profile.timeDeltas[index] ?? 0
  const { url, functionName } = node.callFrame
  // "(idle)", and the native "dispatch" of the in-process inspector session that took the profile.
  if (functionName === "(idle)" || (functionName === "dispatch" && url === "")) return
  total += dt
  const pkg = packageOf(url, functionName)
  perPackage.set(pkg, (perPackage.get(pkg) ?? 0) + dt)
  const f = fileOf(url, functionName)
  perFile.set(f, (perFile.get(f) ?? 0) + dt)
  const fn = `${functionName || "(anonymous)"} ${f}:${node.callFrame.lineNumber + 1}`
  perFunction.set(fn, (perFunction.get(fn) ?? 0) + dt)
})

const table = (map: Map<string, number>, limit: number) =>
  [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([name, us]) => ({ name, "self %": +((100 * us) / total).toFixed(1), "self ms": Math.round(us / 1000) }))

console.log(`${file}: ${(total / 1000).toFixed(0)} ms of non-idle samples`)
console.log("Self time per package (ours per folder)")
console.table(table(perPackage, 30))
console.log(`Top ${top} files by self time`)
console.table(table(perFile, top))
console.log(`Top ${top} functions by self time`)
console.table(table(perFunction, top))
