import { describe, expect, it } from 'vitest';
import { UniversalMessage, Signatures } from '../../../src/protocol/pb.js';

describe('generated protobuf module', () => {
  it('loads under Node ESM and exposes typed classes', () => {
    const m = UniversalMessage.RoutableMessage.create({ flags: 3 });
    const sig: Signatures.ISignatureData = { HMAC_PersonalizedData: { counter: 7 } };
    expect(m.flags).toBe(3);
    expect(sig.HMAC_PersonalizedData?.counter).toBe(7);
    expect(UniversalMessage.Domain.DOMAIN_INFOTAINMENT).toBe(3);
  });
});
