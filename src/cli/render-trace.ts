#!/usr/bin/env node
/**
 * `npm run trace -- trace.jsonl` (or `tsx src/cli/render-trace.ts trace.jsonl`, or standard input):
 * prints a JSON Lines trace as an indented timeline.
 */
import { readFileSync } from "node:fs"
import { renderTrace } from "../trace/render-trace.ts"

const path = process.argv[2]
const text = path === undefined || path === "-" ? readFileSync(0, "utf8") : readFileSync(path, "utf8")
process.stdout.write(`${renderTrace(text)}\n`)
