/**
 * Our library as the bench measures it: the BUILT package (`dist/`, from `npm run build`), the same
 * kind of shipped JavaScript as the peers', unless `BENCH_OURS=src` asks for the TypeScript sources
 * (through tsx). `npm run bench` builds first.
 */
import { existsSync } from "node:fs"
import type * as Lib from "../src/index.ts"

/** Which form of our library is measured: "dist" (default) or "src". */
export const oursSource: "dist" | "src" = process.env.BENCH_OURS === "src" ? "src" : "dist"

const distUrl = new URL("../dist/index.js", import.meta.url)
if (oursSource === "dist" && !existsSync(distUrl)) {
  throw new Error("bench: dist/index.js is missing; run `npm run build` first (or BENCH_OURS=src to measure the sources)")
}

/** The package's root export. */
export const ours: typeof Lib = oursSource === "src" ? await import("../src/index.ts") : await import(distUrl.href)
