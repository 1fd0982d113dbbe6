#!/usr/bin/env node
/**
 * Builds the package into `dist/`: ESM JavaScript, declarations and source maps.
 *
 * The sources import each other with `.ts` extensions (run as they are by vitest and tsx). The compiler
 * rewrites those specifiers to `.js` in the JavaScript it emits (`rewriteRelativeImportExtensions`), but
 * not in declaration files, so this script rewrites the relative specifiers of the emitted `.d.ts` files
 * afterwards: a consumer's TypeScript then never sees a `.ts` import inside node_modules.
 *
 * The compiler's JavaScript (~130 modules) is then bundled by esbuild, one file per entry point of
 * `exports` and `bin`, with the code two entry points share in `dist/chunks/` (issue #20, cold start:
 * Node pays per module it resolves and compiles). Every package import stays external, Effect above
 * all (bundling it would give users two Effects); shared chunks keep one instance of each class across
 * entry points (`effect-agent-dsl` and `effect-agent-dsl/testing`). The declarations stay the
 * compiler's, file by file; the bundles' source maps go through the compiler's to `src/`.
 *
 *   node scripts/build.mjs                     # TypeScript 5.x (what most users run)
 *   node scripts/build.mjs --compiler tsc7     # the TypeScript the repo type-checks with
 *   node scripts/build.mjs --out-dir /tmp/x    # elsewhere (used by the package test)
 */
import { execFileSync } from "node:child_process"
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
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

const walk = (dir, visit) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, visit)
    else visit(path)
  }
}
/**
 * Optional peers (a provider's SDK, the MCP SDK, PGlite, …) are absent from most projects, yet the
 * declarations of the modules that use them import their types. A consumer compiling with
 * `skipLibCheck: false` would get "Cannot find module 'openai'" from our declarations although it never
 * uses `openai(...)`. Each such import gets a `@ts-ignore`: with the peer installed its types apply as
 * usual; without it they are `any` in declarations the consumer does not use.
 */
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const optionalPeers = Object.entries(manifest.peerDependenciesMeta ?? {}).filter(([, meta]) => meta.optional === true).map(([name]) => name)
const importsOptionalPeer = (line) =>
  optionalPeers.some((name) => line.includes(`from "${name}"`) || line.includes(`from "${name}/`))
/** A type query of an optional peer anywhere on the line: `typeof import("@electric-sql/pglite")`. */
const queriesOptionalPeer = (line) =>
  optionalPeers.some((name) => line.includes(`import("${name}")`) || line.includes(`import("${name}/`))
const markOptionalPeers = (text) =>
  text.split("\n").flatMap((line) =>
    (/^\s*(import|export)\b/.test(line) && importsOptionalPeer(line)) || queriesOptionalPeer(line)
      ? ["// @ts-ignore an optional peer dependency: absent unless this feature is used", line]
      : [line]
  ).join("\n")

walk(outDir, (path) => {
  if (path.endsWith(".d.ts")) writeFileSync(path, markOptionalPeers(rewrite(readFileSync(path, "utf8"))))
})

/** The JavaScript files `package.json` points at: every `exports` target and every `bin`. */
const entryPoints = () => {
  const targets = Object.values(manifest.exports).flatMap((target) => typeof target === "string" ? [target] : [target.default])
  return [...targets, ...Object.values(manifest.bin)]
    .filter((target) => target.startsWith("./dist/") && target.endsWith(".js"))
    .map((target) => join(outDir, target.slice("./dist/".length)))
}

const { build } = await import("esbuild")
const bundled = await build({
  entryPoints: entryPoints(),
  outdir: outDir,
  outbase: outDir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  sourcesContent: false,
  write: false,
  allowOverwrite: true,
  logLevel: "warning"
})
// The compiler's JavaScript and its maps make way for the bundles; declarations and their maps stay.
walk(outDir, (path) => {
  if (path.endsWith(".js") || path.endsWith(".js.map")) rmSync(path)
})
for (const file of bundled.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true })
  writeFileSync(file.path, file.contents)
}

// The studio's front end ships as files next to its server: src/studio/ui/public → dist/studio/ui/public
// (the server looks for them relative to its own module, from src under tsx and from dist).
const studioUi = join(root, "src/studio/ui/public")
try {
  cpSync(studioUi, join(outDir, "studio/ui/public"), { recursive: true })
} catch (error) {
  if (error.code !== "ENOENT") throw error
}
