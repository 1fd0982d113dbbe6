/**
 * The digest service Effect Cluster's `SqlMessageStorage` needs (it hashes message ids longer than its
 * column), from `effect` itself, for whichever `effect` 4.x is installed.
 *
 * Why not `@effect/platform-node-shared/NodeCrypto`: the service moved between minor versions of
 * `effect` (4.0 has `effect/Crypto`, 4.1 replaced it with `effect/crypto/Digest`), and a platform
 * package of another minor than the installed `effect` fails to import (`ERR_MODULE_NOT_FOUND
 * …/effect/dist/Crypto.js` with `effect` 4.1 and the platform package 4.0). Both versions of `effect`
 * ship a WebCrypto implementation of their own service (4.1 `Digest.layerWebCrypto`; 4.0 `Crypto.make`
 * over two primitives), so the engines take it from there: no platform package, whatever minor npm
 * resolves inside our `effect` range. The module is found by trying the newer path first; the
 * specifiers are values, not literals, so that type-checking against either version passes.
 */
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import type * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"

/** The service `SqlMessageStorage` hashes with, in the `effect` this is compiled against. */
export type ClusterCryptoService = Exclude<
  Layer.Services<typeof SqlMessageStorage.layer>,
  SqlClient.SqlClient | ShardingConfig.ShardingConfig
>

/** `effect/crypto/Digest` (effect ≥ 4.1): the part used here. */
interface DigestModule {
  readonly layerWebCrypto: Layer.Layer<never>
}
/** `effect/Crypto` (effect 4.0): the part used here. */
interface CryptoModule {
  readonly Crypto: Parameters<typeof Layer.succeed>[0]
  readonly make: (impl: {
    readonly randomBytes: (size: number) => Uint8Array
    readonly digest: (algorithm: string, data: Uint8Array) => Effect.Effect<Uint8Array, unknown>
  }) => unknown
}

const digestModule: string = "effect/crypto/Digest"
const cryptoModule: string = "effect/Crypto"

const webDigest = (algorithm: string, data: Uint8Array) =>
  Effect.tryPromise({
    try: async () => new Uint8Array(await globalThis.crypto.subtle.digest(algorithm, data as Uint8Array<ArrayBuffer>)),
    catch: (cause) => cause
  })

/** A layer for effect 4.0's `Crypto` service on WebCrypto (what `Crypto.make` asks: random bytes, digest). */
const layerFromCrypto = (module: CryptoModule): Layer.Layer<never> =>
  Layer.succeed(
    module.Crypto,
    module.make({
      randomBytes: (size) => globalThis.crypto.getRandomValues(new Uint8Array(size)),
      digest: webDigest
    }) as never
  ) as Layer.Layer<never>

/**
 * Provides the installed `effect`'s digest service (4.1+ `Digest`, 4.0 `Crypto`) on WebCrypto.
 *
 * @example
 * ```ts
 * ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(sharding), Layer.provide(clusterCrypto))
 * ```
 */
export const clusterCrypto: Layer.Layer<ClusterCryptoService, Error> = Layer.unwrap(
  Effect.tryPromise({
    try: async (): Promise<Layer.Layer<ClusterCryptoService>> => {
      try {
        return ((await import(digestModule)) as DigestModule).layerWebCrypto as Layer.Layer<ClusterCryptoService>
      } catch (newer) {
        try {
          return layerFromCrypto((await import(cryptoModule)) as CryptoModule) as Layer.Layer<ClusterCryptoService>
        } catch (older) {
          throw new Error(`the installed effect has neither ${digestModule} (${String(newer)}) nor ${cryptoModule} (${String(older)})`)
        }
      }
    },
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  })
)
