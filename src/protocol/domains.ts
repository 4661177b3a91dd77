/**
 * Vehicle domains (the subsystem a RoutableMessage is addressed to). Values are the
 * protocol's `UniversalMessage.Domain` numbers; kept as plain constants so callers do not
 * need the generated module for a number.
 */
import { UniversalMessage } from './pb.js';

export const Domain = {
  BROADCAST: UniversalMessage.Domain.DOMAIN_BROADCAST, // 0
  VEHICLE_SECURITY: UniversalMessage.Domain.DOMAIN_VEHICLE_SECURITY, // 2 (VCSEC)
  INFOTAINMENT: UniversalMessage.Domain.DOMAIN_INFOTAINMENT, // 3 (CarServer)
} as const;

export type DomainId = (typeof Domain)[keyof typeof Domain];

const NAMES: Record<number, string> = {
  [Domain.BROADCAST]: 'broadcast',
  [Domain.VEHICLE_SECURITY]: 'vehicle_security',
  [Domain.INFOTAINMENT]: 'infotainment',
};

/** Stable snake_case name for logs/metrics; unknown numbers become `domain_<n>`. */
export function domainName(d: number): string {
  return NAMES[d] ?? `domain_${d}`;
}

export function isDomainId(d: unknown): d is DomainId {
  return typeof d === 'number' && Object.prototype.hasOwnProperty.call(NAMES, d);
}
