/**
 * A scripted stand-in for an LLM, for running the example offline: it reads the question and fills
 * `submit_slots` from a small keyword table, typos and all, so the corrections have work to do. It
 * honours forced tool choice like a provider would. Not a model: set AI_PROVIDER to use a real one.
 */
import { ModelClient, type ModelRequest, toolCalls } from "effect-agent-dsl"
import { SUBMIT_SLOTS } from "./forced-choice.ts"

const table: ReadonlyArray<readonly [RegExp, string, string]> = [
  [/\bmoto?r?way\b|\bhighway\b/i, "roadTypes", "motoway"],
  [/\burban\b|\bcity\b/i, "roadTypes", "urban"],
  [/\bgerman[y]?\b/i, "country", "DE"],
  [/\bfrance\b|\bfrench\b/i, "country", "FR"],
  [/\bjapan\b/i, "country", "JP"],
  [/\bbavaria\b/i, "region", "bavaria"],
  [/\brain(y)?\b/i, "weather", "rain"],
  [/\bfog(gy)?\b/i, "weather", "fog"],
  [/\bnight\b/i, "timeOfDay", "night"],
  [/\bcut[- ]?in\b/i, "scenarioType", "cut in"],
  [/\blidar\b/i, "sensorType", "LiDAR"],
  [/\bopen ?drive\b/i, "format", "opendrive"],
  [/\bcc[- ]?by\b/i, "license", "CC-BY-4.0"],
  [/\bgermnay\b/i, "country", "Germnay"],
  [/\bcalifornia?\b|\bcaliforna\b/i, "region", "Californa"],
  [/\bcamera\b/i, "sensorType", "camera"],
  [/\bradar\b/i, "sensorType", "radar"],
  [/\bsnow(y)?\b/i, "weather", "snow"],
  [/\bovertaking\b/i, "scenarioType", "overtaking"]
]

// What the stand-in knows it cannot map: reported as gaps, as a model reading the shapes would.
const unknown: ReadonlyArray<RegExp> = [/\b(thermal)\b/i, /\b(hail)\b/i, /\b(Spain)\b/, /\b(cyclist)\b/i, /\b(MIT)\b/]

const domainsOf = (q: string) => [
  ...(/\bmaps?\b/i.test(q) ? ["hdmap"] : []),
  ...(/\bscenarios?\b/i.test(q) ? ["scenario"] : []),
  ...(/\brecordings?\b|\bdrives?\b/i.test(q) ? ["recording"] : [])
]

/**
 * The stand-in client.
 *
 * @example
 * ```ts
 * const client = standInModel()
 * ```
 */
export const standInModel = (): ModelClient =>
  ModelClient.fromFunction((request: ModelRequest) => {
    const question = [...request.messages].reverse().find((m) => m.role === "user")?.content ?? ""
    const filters: Record<string, Array<string>> = {}
    for (const [pattern, key, value] of table) if (pattern.test(question)) (filters[key] ??= []).push(value)
    const ranges: Record<string, { min?: number; max?: number }> = {}
    const lanes = /at least (\d+) lanes/i.exec(question)
    if (lanes !== null) ranges.laneCount = { min: Number(lanes[1]) }
    const longer = /longer than (\d+) ?s/i.exec(question)
    if (longer !== null) ranges.duration = { min: Number(longer[1]) }
    const gaps = unknown.flatMap((pattern) => { const m = pattern.exec(question); return m === null ? [] : [{ term: m[1]!, reason: "no property or value of the shapes" }] })
    const references = /with their scenario/i.test(question) ? { domain: "scenario" }
      : /referencing scenarios and maps/i.test(question) ? [{ domain: "scenario" }, { domain: "hdmap" }]
      : undefined
    const bounds = Object.entries(ranges).map(([key, { min, max }]) => `${key}${min === undefined ? "" : ` ≥ ${min}`}${max === undefined ? "" : ` ≤ ${max}`}`)
    const interpretation = `${domainsOf(question).join(", ") || "any asset"} with ${JSON.stringify(filters)}${bounds.length === 0 ? "" : `, ${bounds.join(", ")}`}`
    return toolCalls([{ name: SUBMIT_SLOTS, arguments: { slots: { domains: domainsOf(question), filters, ranges, ...(references === undefined ? {} : { references }) }, interpretation, gaps } }])
  }, { provider: "stand-in", model: "keywords" })
