/**
 * Signed snapshots: an HMAC-SHA256 over the snapshot's canonical JSON (the Schema's JSON encoding,
 * without the signature, canonicalised by RFC 8785: keys sorted, no whitespace), tagged with a key id so
 * a snapshot signed with another secret is told apart from one changed after signing. Canonical, so a
 * store that reorders keys (PostgreSQL `jsonb`) or re-indents keeps the signature valid; any change of
 * a value breaks it. An agent that signs (`.signSnapshots(secret)`) refuses unsigned, foreign and
 * tampered snapshots with `SnapshotRejected` before anything runs. `v1` signatures (over the Schema's
 * key order, before canonicalisation) are still verified as they were made.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { encodeSnapshot, type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import { checkSignature, signText } from "../internal/hmac-signature.ts"
import { SnapshotRejected } from "../errors.ts"

const unsigned = (snapshot: RunSnapshot): RunSnapshot => {
  const { signature: _, ...rest } = snapshot
  return rest
}

const encodeValue = Schema.encodeSync(RunSnapshotSchema)

/** The text a signature covers: `v2` the RFC 8785 form of the JSON encoding, `v1` the Schema-ordered JSON. */
const signed = (version: string, snapshot: RunSnapshot): string =>
  version === "v1" ? encodeSnapshot(unsigned(snapshot)) : canonicalJson(encodeValue(unsigned(snapshot)))

/**
 * The snapshot with its signature: `v2.<key id>.<hmac>`, over the snapshot's RFC 8785 canonical JSON.
 *
 * @example
 * ```ts
 * const signed = signSnapshot(snapshot, process.env.SNAPSHOT_SECRET!)
 * ```
 */
export const signSnapshot = (snapshot: RunSnapshot, secret: string): RunSnapshot => ({
  ...unsigned(snapshot),
  signature: signText(secret, signed("v2", snapshot))
})

/** The snapshot when its signature is this secret's and matches its content; else `SnapshotRejected`. */
export const verifySnapshot = (snapshot: RunSnapshot, secret: string): Effect.Effect<RunSnapshot, SnapshotRejected> => {
  const check = checkSignature(snapshot.signature, secret, ["v1", "v2"], (version) => signed(version, snapshot))
  return check === "valid" ? Effect.succeed(snapshot) : Effect.fail(new SnapshotRejected({ agent: snapshot.agent, reason: check }))
}
