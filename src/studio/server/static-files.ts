/**
 * The studio's front end: the files of `studio/ui/public/` served at `/`, looked up next to this module
 * in the sources (`src/studio/ui/public`, run by tsx) and in the package (`dist/studio/ui/public`, which
 * the build copies; bundled code may sit in `dist/chunks/`). No file outside that folder is served.
 */
import { existsSync, readFileSync, statSync } from "node:fs"
import type { ServerResponse } from "node:http"
import { extname, join, normalize, sep } from "node:path"
import { fileURLToPath } from "node:url"

const types: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".map": "application/json"
}

/** The folder of the front end's files, or undefined when none is found. */
export const findUiDirectory = (given?: string): string | undefined => {
  const candidates = given !== undefined ? [given] : [
    fileURLToPath(new URL("../ui/public/", import.meta.url)),
    fileURLToPath(new URL("./ui/public/", import.meta.url)),
    fileURLToPath(new URL("../studio/ui/public/", import.meta.url))
  ]
  return candidates.find((dir) => existsSync(join(dir, "index.html")))
}

/** A page saying the front end is missing (the API still works). */
const missing = `<!doctype html><meta charset="utf-8"><title>effect-agent studio</title>
<p>The studio's front end is not built in this copy of the package; the API answers under <code>/api/</code>.</p>`

/** Serves `pathname` from `dir` (index.html for `/`); false when no such file. */
export const serveStatic = (dir: string | undefined, pathname: string, response: ServerResponse, extraHeaders: Record<string, string>): boolean => {
  if (dir === undefined) {
    if (pathname !== "/" && pathname !== "/index.html") return false
    response.writeHead(200, { "content-type": "text/html; charset=utf-8", ...extraHeaders })
    response.end(missing)
    return true
  }
  let relative: string
  try {
    relative = decodeURIComponent(pathname === "/" ? "/index.html" : pathname)
  } catch {
    return false
  }
  const file = normalize(join(dir, relative))
  const root = normalize(dir.endsWith(sep) ? dir : dir + sep)
  if (!file.startsWith(root) || relative.includes("\0")) return false
  try {
    if (!statSync(file).isFile()) return false
  } catch {
    return false
  }
  response.writeHead(200, {
    "content-type": types[extname(file)] ?? "application/octet-stream",
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    ...extraHeaders
  })
  response.end(readFileSync(file))
  return true
}
