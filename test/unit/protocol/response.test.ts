import { describe, expect, it } from 'vitest';
import { interpretAnswer, genericErrorReason } from '../../../src/protocol/response.js';
import { Domain } from '../../../src/protocol/domains.js';
import { VcpError } from '../../../src/protocol/errors.js';
import { fl, fv, str, join } from './helpers.js';

const INFO = Domain.INFOTAINMENT;
const VC = Domain.VEHICLE_SECURITY;

function thrown(f: () => unknown): VcpError {
  try {
    f();
  } catch (e) {
    if (e instanceof VcpError) return e;
    throw e;
  }
  throw new Error('expected a VcpError');
}

describe('interpretAnswer — infotainment (CarServer.Response)', () => {
  it('empty answer and OK status are success', () => {
    expect(interpretAnswer(INFO, new Uint8Array())).toEqual({ result: true, reason: '' });
    expect(interpretAnswer(INFO, fl(1, fv(1, 0)))).toEqual({ result: true, reason: '' });
  });

  it('ERROR carries the plain-text reason verbatim', () => {
    const bytes = fl(1, fv(1, 1), fl(2, fl(1, str('already_set'))));
    expect(interpretAnswer(INFO, bytes)).toEqual({ result: false, reason: 'already_set' });
    const nc = fl(1, fv(1, 1), fl(2, fl(1, str('not_charging'))));
    expect(interpretAnswer(INFO, nc)).toEqual({ result: false, reason: 'not_charging' });
  });

  it('ERROR without text gets a stable reason', () => {
    expect(interpretAnswer(INFO, fl(1, fv(1, 1)))).toEqual({ result: false, reason: 'unspecified_error' });
  });

  it('unknown result values are not success', () => {
    expect(interpretAnswer(INFO, fl(1, fv(1, 7))).result).toBe(false);
  });

  it('returns decoded response data (ping)', () => {
    const bytes = join(fl(1, fv(1, 0)), fl(9, fv(1, 42)));
    expect(interpretAnswer(INFO, bytes)).toEqual({ result: true, reason: '', data: { ping: { pingId: 42 } } });
  });

  it('garbage is a typed may-have-succeeded error', () => {
    const e = thrown(() => interpretAnswer(INFO, new Uint8Array([0x0a, 0x05, 0x01])));
    expect(e.code).toBe('bad_vehicle_response');
    expect(e.mayHaveSucceeded).toBe(true);
  });
});

describe('interpretAnswer — vehicle security (VCSEC.FromVCSECMessage)', () => {
  it('empty answer is success', () => {
    expect(interpretAnswer(VC, new Uint8Array())).toEqual({ result: true, reason: '' });
  });

  it('nominal error → snake_case generic error name', () => {
    expect(interpretAnswer(VC, fl(46, fv(1, 2)))).toEqual({ result: false, reason: 'closures_open' });
    expect(interpretAnswer(VC, fl(46, fv(1, 5)))).toEqual({ result: false, reason: 'vehicle_not_in_park' });
    expect(genericErrorReason(99)).toBe('generic_error_99');
  });

  it('WAIT → vehicle_busy, temporary, not executed', () => {
    const e = thrown(() => interpretAnswer(VC, fl(4, fv(1, 1))));
    expect(e.code).toBe('vehicle_busy');
    expect(e.temporary).toBe(true);
    expect(e.mayHaveSucceeded).toBe(false);
    expect(e.status).toBe(503);
  });

  it('OK command status is success', () => {
    expect(interpretAnswer(VC, fl(4, fv(1, 0)))).toEqual({ result: true, reason: '' });
  });

  it('ERROR with whitelist information → its snake_case name', () => {
    const bytes = fl(4, fv(1, 2), fl(3, fv(1, 4)));
    expect(interpretAnswer(VC, bytes)).toEqual({ result: false, reason: 'whitelist_full' });
  });

  it('ERROR with signed-message information → its snake_case name', () => {
    const bytes = fl(4, fv(1, 2), fl(2, fv(1, 3), fv(2, 17)));
    expect(interpretAnswer(VC, bytes)).toEqual({ result: false, reason: 'fault_time_expired' });
  });

  it('ERROR without detail is a failure, never success', () => {
    expect(interpretAnswer(VC, fl(4, fv(1, 2)))).toEqual({ result: false, reason: 'unspecified_error' });
  });

  it('vehicle status comes back as data', () => {
    const a = interpretAnswer(VC, fl(1, fv(2, 1)));
    expect(a).toEqual({ result: true, reason: '', data: { vehicleStatus: { vehicleLockState: 'VEHICLELOCKSTATE_LOCKED' } } });
  });

  it('garbage is a typed may-have-succeeded error', () => {
    const e = thrown(() => interpretAnswer(VC, new Uint8Array([0xff, 0xff, 0xff])));
    expect(e.code).toBe('bad_vehicle_response');
    expect(e.mayHaveSucceeded).toBe(true);
  });
});

describe('interpretAnswer — other domains', () => {
  it('refuses broadcast with a typed error', () => {
    expect(thrown(() => interpretAnswer(Domain.BROADCAST, new Uint8Array())).code).toBe('internal_error');
  });
});
