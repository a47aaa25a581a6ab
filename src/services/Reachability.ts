import * as Effect from "effect/Effect"

/** How long a reachability probe waits for an answer. */
export const PROBE_TIMEOUT_SECONDS = 5

/**
 * Whether anything answers HTTP at the URL within the timeout: any status counts as an answer,
 * and redirects are not followed (a redirect is an answer). Fails with why there was none.
 */
export const probeUrl = (url: string): Effect.Effect<void, string> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { method: "GET", redirect: "manual", signal })
      await response.body?.cancel()
    },
    catch: reasonOf
  }).pipe(
    Effect.timeoutFail({
      duration: `${PROBE_TIMEOUT_SECONDS} seconds`,
      onTimeout: () => `no answer within ${PROBE_TIMEOUT_SECONDS} s`
    })
  )

/** The network error's code (ECONNREFUSED, ENOTFOUND, …): enough to act on, nothing of the peer. */
const reasonOf = (error: unknown): string => {
  const cause = (error as { readonly cause?: { readonly code?: unknown } } | undefined)?.cause
  return typeof cause?.code === "string" ? `no answer (${cause.code})` : "no answer"
}
