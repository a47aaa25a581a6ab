import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/**
 * API keys and session keys: 256 random bits from the crypto RNG, shown once, stored only as
 * SHA-256 hashes. A key is recognised by its hash; hashes are compared in constant time.
 */
export const generateSecret = (prefix: string): string => `${prefix}${randomBytes(32).toString("base64url")}`

export const hashSecret = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

/** What may be shown of a key after creation: its first 8 characters. */
export const secretPrefix = (secret: string): string => secret.slice(0, 8)

export const hashesEqual = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "hex")
  const right = Buffer.from(b, "hex")
  return left.length === right.length && timingSafeEqual(left, right)
}

export const API_KEY_PREFIX = "hgr_"
