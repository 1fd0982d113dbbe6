#!/usr/bin/env node
/**
 * Builds the package into `dist/`: ESM JavaScript, declarations and source maps.
 *
 * The sources import each other with `.ts` extensions (run as they are by vitest and tsx). The compiler
 * rewrites those specifiers to `.js` in the JavaScript it emits (`rewriteRelativeImportExtensions`), but
 * not in declaration files, so this script rewrites the relative specifiers of the emitted `.d.ts` files
 * afterwards: a consumer's TypeScript then never sees a `.ts` import inside node_modules.
 *
 *   node scripts/build.mjs                     # TypeScript 5.x (what most users run)
 *   node scripts/build.mjs --compiler tsc7     # the TypeScript the repo type-checks with
 *   node scripts/build.mjs --out-dir /tmp/x    # elsewhere (used by the package test)
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(fileURLToPath(import.meta.url), "../..")
const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const at = argv.indexOf(name)
  return at === -1 ? fallback : argv[at + 1]
}
const compiler = option("--compiler", "tsc5")
const outDir = resolve(root, option("--out-dir", "dist"))

const require = createRequire(import.meta.url)
const tscBin = compiler === "tsc7"
  ? join(root, "node_modules/typescript/bin/tsc")
  : require.resolve("typescript5/bin/tsc", { paths: [root] })

rmSync(outDir, { recursive: true, force: true })
execFileSync(process.execPath, [tscBin, "-p", join(root, "tsconfig.build.json"), "--outDir", outDir], { stdio: "inherit", cwd: root })

/** `from "./x.ts"`, `import("./x.ts")` → `.js`, relative specifiers only. */
const rewrite = (text) => text.replace(/((?:from\s+|import\s*\(\s*)["'])(\.{1,2}\/[^"']+?)\.ts(["'])/g, "$1$2.js$3")

const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path)
    else if (entry.name.endsWith(".d.ts")) writeFileSync(path, rewrite(readFileSync(path, "utf8")))
  }
}
walk(outDir)
