/**
 * Orders strings by code point, as Postgres orders text `COLLATE "C"` (UTF-8 byte order). JavaScript's
 * `<` compares UTF-16 code units, which disagrees for characters beyond U+FFFF (stored as surrogates,
 * D800–DFFF) against those of E000–FFFF: at the first difference both are moved into code point order.
 */
export const compareCodePoints = (a: string, b: string): number => {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    }
    return x - y
  }
  return a.length - b.length
}
