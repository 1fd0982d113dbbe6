/**
 * The keys of a durable run's tool steps: the Activity name (which is also the claim key of a
 * mutating call in `ToolIntents`, shared by every run of the engine) and the `idempotencyKey` a tool
 * receives. Both are joined from the run id, the turn and the call id; the call id comes from the
 * model and the run id from the caller, so either may hold the separators. Each part is
 * percent-encoded before it is joined (`%`, `/`, `#` and `~` only), which makes the join one to one:
 * run "a/1" with call "c2" and run "a" with call "1/c2" no longer meet at `tool/a/1/1/c2`, a call id
 * "c#2" is not the second occurrence of call "c", and a user's run "x~2" is not run "x"'s handoff
 * `x~2` (a handoff's id is its root's encoded id, then `~n`).
 *
 * An id without those four characters (every id this library makes, and almost every id a provider
 * or a caller gives) is unchanged, so the keys of such runs are those of earlier versions: a run in
 * flight across an upgrade replays its recorded steps under the same names. For a run whose id or a
 * call id holds one of them, the names changed; a mutating call of such a run first looks for its
 * claim under the earlier key (`legacyToolKey`: a claim of the same run, tool and call id), so it is
 * not run a second time; except for a run id ending in `~<digits>`, whose earlier keys are a handoff's
 * keys now (the run's tool steps not recorded before the upgrade then run again).
 */

const special = /[%/#~]/
const specialAll = /[%/#~]/g
const hex = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`

/**
 * `part` as one part of a key: `%`, `/`, `#` and `~` percent-encoded; unchanged without them.
 *
 * @example
 * ```ts
 * keyPart("1/c2") // "1%2Fc2"
 * ```
 */
export const keyPart = (part: string): string => (special.test(part) ? part.replace(specialAll, hex) : part)

/** A handoff's id after its root's: `~` and the handoff's number (`durability.runId`). */
const handoffSuffix = /^~[0-9]+$/

/**
 * The run part of a step's keys, for step run `runId` of the execution of root run `rootRunId`: the
 * root's encoded id, and for a run it handed off to, that followed by `~n` (which no encoded id holds).
 */
export const runKeyPart = (rootRunId: string, runId: string): string => {
  if (runId === rootRunId) return keyPart(rootRunId)
  if (runId.startsWith(rootRunId) && handoffSuffix.test(runId.slice(rootRunId.length))) return keyPart(rootRunId) + runId.slice(rootRunId.length)
  return keyPart(runId)
}

/**
 * Whether the earlier version's keys of run `runId` may be keys of this version's for another run:
 * an id such as "x~2" (the prefix without `/ # ~`) spelled them as run "x"'s handoff now spells its
 * own, with the same run id in the claim, so a claim found there cannot be told apart.
 */
const legacyAmbiguous = (runId: string): boolean => /^[^/#~]*~[0-9]+$/.test(runId)

/** The keys of one tool call of a durable run. */
export interface ToolStepKeys {
  /** The Activity's name before its occurrence (`#n`): `tool/<run>/<turn>/<call>`. */
  readonly base: string
  /**
   * What the name was before the parts were encoded, when it differs (see `legacyToolKey`), unless
   * that may be another run's name now (a run id such as "x~2").
   */
  readonly legacyBase: string | undefined
  /** The tool's `idempotencyKey`: `<run>/<turn>/<call>`. */
  readonly idempotencyKey: string
}

/**
 * The keys of the call `callId` of turn `turn` of step run `runId` (root `rootRunId`).
 *
 * @example
 * ```ts
 * toolStepKeys("a", "a", 1, "1/c2") // { base: "tool/a/1/1%2Fc2", legacyBase: "tool/a/1/1/c2", idempotencyKey: "a/1/1%2Fc2" }
 * ```
 */
export const toolStepKeys = (rootRunId: string, runId: string, turn: number, callId: string): ToolStepKeys => {
  const tail = `${runKeyPart(rootRunId, runId)}/${turn}/${keyPart(callId)}`
  const base = `tool/${tail}`
  const legacyBase = `tool/${runId}/${turn}/${callId}`
  return { base, legacyBase: legacyBase === base || legacyAmbiguous(runId) ? undefined : legacyBase, idempotencyKey: tail }
}

/**
 * The claim key an earlier version gave the `occurrence`-th call named `legacyBase` in an execution
 * (the name's `#n` is the same in both versions: it counts the same calls).
 */
export const legacyToolKey = (legacyBase: string, occurrence: number): string => (occurrence === 1 ? legacyBase : `${legacyBase}#${occurrence}`)

/**
 * Whether claim `key` (of a claim whose run is `claimRunId`) is one of root run `rootRunId`'s (its
 * own calls and those of the runs it handed off to): what `d.journal` shows. A claim written by an
 * earlier version, under the parts as they were, counts when its run is the root or one of its handoffs.
 */
export const isClaimOfRun = (rootRunId: string, key: string, claimRunId: string): boolean => {
  const root = keyPart(rootRunId)
  if (key.startsWith(`tool/${root}/`) || key.startsWith(`tool/${root}~`)) return true
  if (root === rootRunId) return false
  const handoff = claimRunId === rootRunId || (claimRunId.startsWith(rootRunId) && handoffSuffix.test(claimRunId.slice(rootRunId.length)))
  return handoff && !legacyAmbiguous(claimRunId) && key.startsWith(`tool/${claimRunId}/`)
}
