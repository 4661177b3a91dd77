/** Test helpers for src/crypto: a local CommandKey and deterministic randomness. */
import { createHash } from 'node:crypto';
import { ecdhSharedX, fromHex, publicKeyFromScalar, type CommandKey, type Random } from '../../../src/crypto/index.js';

export function testKey(scalarHex: string): CommandKey & { calls: number } {
  const scalar = fromHex(scalarHex);
  const publicKey = publicKeyFromScalar(scalar);
  const key = {
    publicKey,
    calls: 0,
    sharedSecretX(peer: Uint8Array) {
      key.calls++;
      return ecdhSharedX(scalar, peer);
    },
    signJws(): Uint8Array {
      throw new Error('not used in crypto session tests');
    },
  };
  return key;
}

/** Deterministic byte source: SHA-256(seed ‖ counter) stream. */
export function seededRandom(seed: string): Random & { drawn: number } {
  let i = 0;
  const f = ((n: number) => {
    const out = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const block = createHash('sha256').update(`${seed}:${i++}`).digest();
      const take = Math.min(block.length, n - off);
      out.set(block.subarray(0, take), off);
      off += take;
    }
    f.drawn += n;
    return out;
  }) as Random & { drawn: number };
  f.drawn = 0;
  return f;
}

/** Reference test keys (internal/authentication/peer_test.go). */
export const VERIFIER_SCALAR = '72e9a493ba41e792b104274331105fa6c908c27f15913eecc2f4ec115b281ae0';
export const SIGNER_SCALAR = '4807e29d46425d07df48193249a6241d411ac4007375c75d5d4a22ecf189cdde';
