/**
 * The signature both kinds of snapshot carry (a run's and a composite's): `v2.<key id>.<hmac>`, an
 * HMAC-SHA256 of a text the caller gives (its canonical JSON), tagged with a key id so that a
 * signature made with another secret is told apart from content changed after signing. `node:crypto`
 * loads when a snapshot is first signed or verified, not with the package (cold start).
 *
 * @example
 * ```ts
 * const signature = signText(secret, canonicalJson(value))
 * checkSignature(signature, secret, ["v2"], () => canonicalJson(value)) // "valid"
 * ```
 */
import { lazyPackage } from "./lazy-package.ts"

const crypto = lazyPackage<typeof import("node:crypto")>("node:crypto")

const keyId = (secret: string): string => crypto().createHmac("sha256", secret).update("effect-agent-dsl/snapshot-key-id").digest("hex").slice(0, 16)

const hmac = (secret: string, text: string): string => crypto().createHmac("sha256", secret).update(text).digest("hex")

/** The `v2` signature of `text` with `secret`. */
export const signText = (secret: string, text: string): string => `v2.${keyId(secret)}.${hmac(secret, text)}`

/** What a signature says of its content: made with this secret over it, absent, another secret's, or not over it. */
export type SignatureCheck = "valid" | "unsigned" | "foreign" | "tampered"

/**
 * Checks `signature` against `secret`: its version must be one of `versions`, its key id this
 * secret's, and its HMAC that of `textOf(version)` (computed only then; a throw counts as tampered).
 */
export const checkSignature = (
  signature: string | undefined,
  secret: string,
  versions: ReadonlyArray<string>,
  textOf: (version: string) => string
): SignatureCheck => {
  if (signature === undefined) return "unsigned"
  const [version, id, digest] = signature.split(".")
  if (version === undefined || !versions.includes(version) || id === undefined || digest === undefined) return "tampered"
  if (id !== keyId(secret)) return "foreign"
  let expected: Buffer
  try {
    expected = Buffer.from(hmac(secret, textOf(version)), "hex")
  } catch {
    return "tampered"
  }
  const found = Buffer.from(digest, "hex")
  return found.length === expected.length && crypto().timingSafeEqual(found, expected) ? "valid" : "tampered"
}
