#!/usr/bin/env node
/**
 * Codemod: imports from Effect's barrel (`import { Effect, Schema } from "effect"`) become imports of
 * its modules (`import * as Effect from "effect/Effect"`), so that Node loads only the modules the
 * package uses instead of all ~330 the barrel re-exports (issue #20, cold start); the same for its
 * lowercase sub-barrels (`import { X } from "effect/ai"` → `import * as X from "effect/ai/X"`). The functions the
 * barrel re-exports from `effect/Function` (`pipe`, `flow`, `identity`, …) come from there.
 *
 *   node scripts/effect-direct-imports.mjs            # rewrites src/ in place (prints what changed)
 *   node scripts/effect-direct-imports.mjs --check    # exits 1 when a barrel import is left
 *   node scripts/effect-direct-imports.mjs --dir x    # another folder
 *
 * Only single-statement `import { … } from "effect"` / `import type { … } from "effect"` forms exist in
 * src/ today; anything else importing the barrel is reported and left alone.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(fileURLToPath(import.meta.url), "../..")
const argv = process.argv.slice(2)
const check = argv.includes("--check")
const at = argv.indexOf("--dir")
const dir = resolve(root, at === -1 ? "src" : argv[at + 1])

const fromFunction = new Set(["absurd", "cast", "flow", "hole", "identity", "pipe"])
// `effect` and its lowercase sub-barrels (`effect/ai`, `effect/sql`, …), whose `index` re-exports modules.
const statement = /^import (type )?\{([^}]*)\} from "effect((?:\/[a-z][a-z-]*)?)"\n?/gm

const rewrite = (text) =>
  text.replace(statement, (_, typeOnly, names, barrel) => {
    const lines = []
    const functions = []
    for (const raw of names.split(",").map((n) => n.trim()).filter((n) => n !== "")) {
      const isType = typeOnly !== undefined || raw.startsWith("type ")
      const name = raw.replace(/^type\s+/, "")
      const [imported, local = imported] = name.split(/\s+as\s+/)
      if (barrel === "" && fromFunction.has(imported)) functions.push(`${isType ? "type " : ""}${name}`)
      else lines.push(`import ${isType ? "type " : ""}* as ${local} from "effect${barrel}/${imported}"`)
    }
    if (functions.length > 0) lines.push(`import { ${functions.join(", ")} } from "effect/Function"`)
    return lines.map((l) => `${l}\n`).join("")
  })

const files = []
const walk = (d) => {
  for (const entry of readdirSync(d, { withFileTypes: true })) {
    const path = join(d, entry.name)
    if (entry.isDirectory()) walk(path)
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) files.push(path)
  }
}
walk(dir)

let changed = 0
let left = 0
for (const file of files) {
  const text = readFileSync(file, "utf8")
  const next = rewrite(text)
  // Doc comments' examples import from "effect" as users do; only code lines count.
  if (/^(?!\s*\*).*from "effect(\/[a-z][a-z-]*)?"/m.test(next)) {
    left++
    console.error(`left alone (not a single-line named import): ${file}`)
  }
  if (next !== text) {
    changed++
    if (check) console.error(`barrel import: ${file}`)
    else writeFileSync(file, next)
  }
}
console.log(`${check ? "would rewrite" : "rewrote"} ${changed} file(s); ${left} with a barrel import left`)
if (check && changed + left > 0) process.exit(1)
