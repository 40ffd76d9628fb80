/**
 * negotiator's Accept-Encoding module (`negotiator/lib/encoding.js`, the function behind
 * `Negotiator#encodings`), imported alone: @types/negotiator types only the package's entry.
 */
declare module 'negotiator/lib/encoding.js' {
  /** The encodings of `provided` the header accepts (q > 0), best first; all of the header's when `provided` is absent. */
  export default function preferredEncodings(accept: string | undefined, provided?: string[], preferred?: string[]): string[];
}
