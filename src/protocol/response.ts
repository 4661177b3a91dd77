/**
 * Interpret a vehicle's application-layer answer (the already authenticated and decrypted
 * payload bytes) as the service's `{result, reason}`.
 *
 * - Infotainment: `CarServer.Response`. actionStatus.result OK → result true; ERROR → result
 *   false with `resultReason.plainText` as the reason verbatim (that is where `already_set`,
 *   `not_charging`, … come from). The reference prefixes "car could not execute command: ";
 *   we pass the vehicle's text unchanged because the service documents bare reasons.
 * - Vehicle security: `VCSEC.FromVCSECMessage`. Empty → success. `nominalError` → result
 *   false with the GenericError_E name in snake_case (`closures_open`, …). commandStatus
 *   WAIT → `VcpError('vehicle_busy')`, temporary, not executed (reference: ErrBusy).
 *   commandStatus ERROR → result false with the whitelist-operation or signed-message
 *   information as reason.
 * - Bytes that do not decode: `VcpError('bad_vehicle_response')` with mayHaveSucceeded
 *   true — the vehicle accepted and authenticated the command, so it may have run
 *   (reference: unparseable responses are PossibleSuccess).
 *
 * Must not: do crypto or I/O; callers hand in plaintext.
 */
import { VcpError } from './errors.js';
import { Domain, domainName } from './domains.js';
import { CarServer, Errors, VCSEC } from './pb.js';

export interface Answer {
  result: boolean;
  reason: string;
  /** Decoded extra payload (vehicle status, whitelist info, ping, nearby sites, …), JSON-safe. */
  data?: Record<string, unknown>;
}

/** protobufjs → plain JSON-safe object: enums as names, bytes as base64, 64-bit as numbers. */
const TO_OBJECT = { enums: String, bytes: String, longs: Number, defaults: false, oneofs: false } as const;

function badResponse(domain: number, cause: unknown): VcpError {
  return new VcpError(
    'bad_vehicle_response',
    `The vehicle's ${domainName(domain)} answer could not be decoded; the command may have executed — check the vehicle state before retrying.`,
    { status: 502, mayHaveSucceeded: true, cause },
  );
}

/** GENERICERROR_CLOSURES_OPEN → closures_open; unknown numbers → generic_error_<n>. */
export function genericErrorReason(code: number): string {
  const name = (Errors.GenericError_E as unknown as Record<number, string | undefined>)[code];
  return name ? name.replace(/^GENERICERROR_/, '').toLowerCase() : `generic_error_${code}`;
}

function enumReason(e: object, value: number, prefix: RegExp, fallback: string): string {
  const name = (e as Record<number, string | undefined>)[value];
  return name ? name.replace(prefix, '').toLowerCase() : `${fallback}_${value}`;
}

export function interpretAnswer(domain: number, plaintext: Uint8Array): Answer {
  if (domain === Domain.INFOTAINMENT) return interpretCarServer(plaintext);
  if (domain === Domain.VEHICLE_SECURITY) return interpretVcsec(plaintext);
  throw new VcpError('internal_error', `No answer interpretation for domain ${domainName(domain)}; this is a proxy bug.`, {
    status: 500,
  });
}

function interpretCarServer(plaintext: Uint8Array): Answer {
  let resp: CarServer.Response;
  try {
    resp = CarServer.Response.decode(plaintext);
  } catch (cause) {
    throw badResponse(Domain.INFOTAINMENT, cause);
  }
  const status = resp.actionStatus;
  const data = carServerData(resp);
  if (status && status.result === CarServer.OperationStatus_E.OPERATIONSTATUS_ERROR) {
    const text = status.resultReason?.plainText ?? '';
    return withData({ result: false, reason: text === '' ? 'unspecified_error' : text }, data);
  }
  if (status && status.result !== CarServer.OperationStatus_E.OPERATIONSTATUS_OK) {
    // A result value this schema does not know: do not claim success.
    return withData({ result: false, reason: `unknown_result_${status.result}` }, data);
  }
  return withData({ result: true, reason: '' }, data);
}

function carServerData(resp: CarServer.Response): Record<string, unknown> | undefined {
  if (!resp.responseMsg) return undefined;
  const obj = CarServer.Response.toObject(resp, TO_OBJECT) as Record<string, unknown>;
  delete obj.actionStatus;
  return Object.keys(obj).length > 0 ? obj : undefined;
}

function interpretVcsec(plaintext: Uint8Array): Answer {
  let msg: VCSEC.FromVCSECMessage;
  try {
    msg = VCSEC.FromVCSECMessage.decode(plaintext);
  } catch (cause) {
    throw badResponse(Domain.VEHICLE_SECURITY, cause);
  }
  if (msg.nominalError) {
    return { result: false, reason: genericErrorReason(msg.nominalError.genericError ?? 0) };
  }
  const cs = msg.commandStatus;
  if (cs) {
    const op = cs.operationStatus ?? VCSEC.OperationStatus_E.OPERATIONSTATUS_OK;
    if (op === VCSEC.OperationStatus_E.OPERATIONSTATUS_WAIT) {
      throw new VcpError('vehicle_busy', 'The vehicle is busy or still waking up; retry after a few seconds.', {
        status: 503,
        temporary: true,
        mayHaveSucceeded: false,
      });
    }
    if (op === VCSEC.OperationStatus_E.OPERATIONSTATUS_ERROR) {
      const wl = cs.whitelistOperationStatus?.whitelistOperationInformation;
      if (wl) {
        return {
          result: false,
          reason: enumReason(VCSEC.WhitelistOperation_information_E, wl, /^WHITELISTOPERATION_INFORMATION_/, 'whitelist_error'),
        };
      }
      const sm = cs.signedMessageStatus?.signedMessageInformation;
      if (sm) {
        return {
          result: false,
          reason: enumReason(VCSEC.SignedMessage_information_E, sm, /^SIGNEDMESSAGE_INFORMATION_/, 'signed_message_error'),
        };
      }
      return { result: false, reason: 'unspecified_error' };
    }
    if (op !== VCSEC.OperationStatus_E.OPERATIONSTATUS_OK) {
      return { result: false, reason: `unknown_result_${op}` };
    }
  }
  const data = msg.subMessage && msg.subMessage !== 'commandStatus'
    ? (VCSEC.FromVCSECMessage.toObject(msg, TO_OBJECT) as Record<string, unknown>)
    : undefined;
  return withData({ result: true, reason: '' }, data);
}

function withData(a: Answer, data: Record<string, unknown> | undefined): Answer {
  return data ? { ...a, data } : a;
}
