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
import { lazyPackage } from "../internal/lazy-package.ts"
import * as Schema from "effect/Schema"
import { encodeSnapshot, type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import { SnapshotRejected } from "../errors.ts"

// node:crypto loads when a snapshot is first signed or verified, not with the package (cold start, #20).
const crypto = lazyPackage<typeof import("node:crypto")>("node:crypto")

const unsigned = (snapshot: RunSnapshot): RunSnapshot => {
  const { signature: _, ...rest } = snapshot
  return rest
}

const keyId = (secret: string): string => crypto().createHmac("sha256", secret).update("effect-agent-dsl/snapshot-key-id").digest("hex").slice(0, 16)

const encodeValue = Schema.encodeSync(RunSnapshotSchema)

/** The text a signature covers: `v2` the RFC 8785 form of the JSON encoding, `v1` the Schema-ordered JSON. */
const signed = (version: "v1" | "v2", snapshot: RunSnapshot): string =>
  version === "v1" ? encodeSnapshot(unsigned(snapshot)) : canonicalJson(encodeValue(unsigned(snapshot)))

const mac = (secret: string, snapshot: RunSnapshot, version: "v1" | "v2" = "v2"): string =>
  crypto().createHmac("sha256", secret).update(signed(version, snapshot)).digest("hex")

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
  signature: `v2.${keyId(secret)}.${mac(secret, snapshot)}`
})

/** The snapshot when its signature is this secret's and matches its content; else `SnapshotRejected`. */
export const verifySnapshot = (snapshot: RunSnapshot, secret: string): Effect.Effect<RunSnapshot, SnapshotRejected> => {
  const reject = (reason: SnapshotRejected["reason"]) => Effect.fail(new SnapshotRejected({ agent: snapshot.agent, reason }))
  const signature = snapshot.signature
  if (signature === undefined) return reject("unsigned")
  const [version, id, digest] = signature.split(".")
  if ((version !== "v1" && version !== "v2") || id === undefined || digest === undefined) return reject("tampered")
  if (id !== keyId(secret)) return reject("foreign")
  let expected: Buffer
  try {
    expected = Buffer.from(mac(secret, snapshot, version), "hex")
  } catch {
    return reject("tampered")
  }
  const found = Buffer.from(digest, "hex")
  return found.length === expected.length && crypto().timingSafeEqual(found, expected) ? Effect.succeed(snapshot) : reject("tampered")
}
