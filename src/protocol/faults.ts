/**
 * The one table over `UniversalMessage.MessageFault_E`: what each authentication-layer fault
 * means for the proxy and its clients.
 *
 * Columns:
 * - `code`: stable snake_case error code (clients branch on it).
 * - `httpStatus`: what the proxy answers when the fault survives its own handling.
 * - `resync`: the vehicle's verifier attaches freshly tagged session info to this fault, so
 *   a correct client may authenticate that session info, adopt it and re-sign ONCE with a new
 *   counter. Source: reference `internal/authentication/verifier.go`, where exactly these
 *   faults are built through `signatureError(...)` (which packs signed session info):
 *   INVALID_SIGNATURE, INVALID_TOKEN_OR_COUNTER, INCORRECT_EPOCH, TIME_EXPIRED,
 *   TIME_TO_LIVE_TOO_LONG. The verifier also uses it for BAD_PARAMETER when `expires_at`
 *   exceeds the epoch length; we still mark BAD_PARAMETER `resync: false` because its general
 *   meaning ("malformed or deprecated parameter", enum comment) is a client bug that
 *   re-signing cannot fix. The enum comments agree: 5, 6, 15 say "use included session
 *   info … try again", 17 says "use included session info to determine if clocks have
 *   desynchronized".
 * - `temporary`: retrying later (after resync or a short delay) can succeed. Mirrors the
 *   reference's retriable list in `pkg/protocol/error.go` (BUSY, TIMEOUT, INVALID_SIGNATURE,
 *   INVALID_TOKEN_OR_COUNTER, INTERNAL, INCORRECT_EPOCH, TIME_EXPIRED, TIME_TO_LIVE_TOO_LONG).
 * - `mayHaveSucceeded`: the vehicle may have executed the command anyway. A fault means the
 *   message was refused before execution, so this is false — except RESPONSE_MTU_EXCEEDED
 *   ("request was received, but response size exceeded MTU"; the reference also reports it as
 *   may-have-succeeded) and REPEATED_COUNTER (we never reuse a counter, so a repeated counter
 *   means the same signed message was delivered twice; the first delivery may have executed).
 *   Never resend automatically when true.
 * - `description` / `remedy`: human text. Remedies say what to do next; `{pairing_url}` and
 *   `{developer_domain}` are placeholders filled by `faultRemedy`.
 *
 * Must not: do I/O or decide retries itself — session/ owns the resync loop.
 */
import { VcpError } from './errors.js';
import { UniversalMessage } from './pb.js';

const F = UniversalMessage.MessageFault_E;

export interface FaultInfo {
  fault: number;
  /** Enum name, e.g. MESSAGEFAULT_ERROR_BUSY (for logs). */
  name: string;
  code: string;
  httpStatus: number;
  resync: boolean;
  temporary: boolean;
  mayHaveSucceeded: boolean;
  description: string;
  remedy: string;
}

type Row = Omit<FaultInfo, 'fault' | 'name'>;

const PAIRING_LINK = '{pairing_url}/_ak/{developer_domain}';

const TABLE: Record<number, Row> = {
  [F.MESSAGEFAULT_ERROR_NONE]: {
    code: 'ok',
    httpStatus: 200,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'No fault: the vehicle accepted the message.',
    remedy: 'Nothing to do.',
  },
  [F.MESSAGEFAULT_ERROR_BUSY]: {
    code: 'vehicle_busy',
    httpStatus: 503,
    resync: false,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'A vehicle subsystem needed for the command is busy (often still waking up).',
    remedy: 'Retry after a few seconds.',
  },
  [F.MESSAGEFAULT_ERROR_TIMEOUT]: {
    code: 'vehicle_timeout',
    httpStatus: 503,
    resync: false,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'A vehicle subsystem did not respond in time.',
    remedy: 'Retry after a few seconds; wake the vehicle if it is asleep.',
  },
  [F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID]: {
    code: 'key_not_paired',
    httpStatus: 403,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: "The vehicle does not know the key that signed the command.",
    remedy: `Pair the application's key with the vehicle: open ${PAIRING_LINK} on the phone with the vehicle's app and approve the key, then retry.`,
  },
  [F.MESSAGEFAULT_ERROR_INACTIVE_KEY]: {
    code: 'key_inactive',
    httpStatus: 403,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The key that signed the command is enrolled but disabled.',
    remedy: `Ask the vehicle owner to re-enable the key, or pair it again via ${PAIRING_LINK}.`,
  },
  [F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE]: {
    code: 'invalid_signature',
    httpStatus: 502,
    resync: true,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'The command signature/MAC did not verify (usually a stale session).',
    remedy: 'Adopt the session info the vehicle returned and re-sign; if it persists, the key or VIN configuration is wrong.',
  },
  [F.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER]: {
    code: 'invalid_counter',
    httpStatus: 502,
    resync: true,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'The anti-replay counter was already used or is outside the vehicle window.',
    remedy: 'Adopt the session info the vehicle returned and re-sign with a fresh counter.',
  },
  [F.MESSAGEFAULT_ERROR_INSUFFICIENT_PRIVILEGES]: {
    code: 'insufficient_privileges',
    httpStatus: 403,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: "The key's role (or the vehicle's state) does not allow this command.",
    remedy: 'Use a key with a role that permits the command, or change the vehicle state first.',
  },
  [F.MESSAGEFAULT_ERROR_INVALID_DOMAINS]: {
    code: 'invalid_domain',
    httpStatus: 422,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The command was addressed to a vehicle subsystem the vehicle does not recognise.',
    remedy: 'The vehicle firmware may be too old for this command; update the vehicle or use the REST command.',
  },
  [F.MESSAGEFAULT_ERROR_INVALID_COMMAND]: {
    code: 'unsupported_command',
    httpStatus: 422,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The vehicle did not recognise the command.',
    remedy: 'The vehicle firmware may not support this command; update the vehicle or check the command name.',
  },
  [F.MESSAGEFAULT_ERROR_DECODING]: {
    code: 'vehicle_decoding_error',
    httpStatus: 500,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The vehicle could not parse the command (client-side encoding bug).',
    remedy: 'Report this as a proxy bug with the command name and parameters (not the signed payload).',
  },
  [F.MESSAGEFAULT_ERROR_INTERNAL]: {
    code: 'vehicle_internal_error',
    httpStatus: 503,
    resync: false,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'Internal vehicle error, most often because the vehicle has not finished booting.',
    remedy: 'Retry after a few seconds.',
  },
  [F.MESSAGEFAULT_ERROR_WRONG_PERSONALIZATION]: {
    code: 'wrong_vin',
    httpStatus: 502,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The command was signed for a different VIN than the vehicle that received it.',
    remedy: 'Check that the VIN in the request path is the vehicle you mean to command.',
  },
  [F.MESSAGEFAULT_ERROR_BAD_PARAMETER]: {
    code: 'bad_parameter',
    httpStatus: 500,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The command was malformed or used a deprecated parameter.',
    remedy: 'Report this as a proxy bug with the command name and parameters (not the signed payload).',
  },
  [F.MESSAGEFAULT_ERROR_KEYCHAIN_IS_FULL]: {
    code: 'keychain_full',
    httpStatus: 409,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: "The vehicle's keychain is full.",
    remedy: 'Remove a key from the vehicle (in the vehicle or its app) before adding another.',
  },
  [F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH]: {
    code: 'session_epoch_changed',
    httpStatus: 502,
    resync: true,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'The vehicle started a new session epoch (e.g. after a reboot).',
    remedy: 'Adopt the session info the vehicle returned and re-sign.',
  },
  [F.MESSAGEFAULT_ERROR_IV_INCORRECT_LENGTH]: {
    code: 'bad_nonce_length',
    httpStatus: 500,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The AES-GCM nonce was not 12 bytes (client programming error).',
    remedy: 'Report this as a proxy bug.',
  },
  [F.MESSAGEFAULT_ERROR_TIME_EXPIRED]: {
    code: 'command_expired',
    httpStatus: 502,
    resync: true,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'The command arrived after its expiry time (clock drift or a slow path).',
    remedy: "Adopt the session info the vehicle returned (it corrects the clock offset) and re-sign.",
  },
  [F.MESSAGEFAULT_ERROR_NOT_PROVISIONED_WITH_IDENTITY]: {
    code: 'vehicle_not_provisioned',
    httpStatus: 540,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The vehicle has no VIN provisioned and may require service.',
    remedy: 'Contact vehicle service; commands cannot be authenticated until it is fixed.',
  },
  [F.MESSAGEFAULT_ERROR_COULD_NOT_HASH_METADATA]: {
    code: 'vehicle_metadata_error',
    httpStatus: 540,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'Internal vehicle error while hashing command metadata.',
    remedy: 'Retry later; if it persists the vehicle may need a restart or service.',
  },
  [F.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG]: {
    code: 'expiry_too_far',
    httpStatus: 502,
    resync: true,
    temporary: true,
    mayHaveSucceeded: false,
    description: 'The command expiry was too far in the future (or the counter was out of order with a long expiry).',
    remedy: 'Adopt the session info the vehicle returned and re-sign with a short expiry.',
  },
  [F.MESSAGEFAULT_ERROR_REMOTE_ACCESS_DISABLED]: {
    code: 'mobile_access_disabled',
    httpStatus: 401,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The vehicle owner has turned off remote (mobile) access.',
    remedy: 'Ask the owner to enable mobile access in the vehicle settings.',
  },
  [F.MESSAGEFAULT_ERROR_REMOTE_SERVICE_ACCESS_DISABLED]: {
    code: 'remote_service_access_disabled',
    httpStatus: 403,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The command was signed with a service key but remote service commands are not enabled.',
    remedy: 'Enable remote service access on the vehicle or use a non-service key.',
  },
  [F.MESSAGEFAULT_ERROR_COMMAND_REQUIRES_ACCOUNT_CREDENTIALS]: {
    code: 'requires_account_credentials',
    httpStatus: 403,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The command needs proof of account credentials, which this channel does not carry.',
    remedy: 'Send the command through the fleet service (not a direct/BLE channel).',
  },
  [F.MESSAGEFAULT_ERROR_REQUEST_MTU_EXCEEDED]: {
    code: 'request_too_large',
    httpStatus: 413,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'A field of the request exceeded the vehicle MTU.',
    remedy: 'Shorten the request parameters (e.g. names, lists) and retry.',
  },
  [F.MESSAGEFAULT_ERROR_RESPONSE_MTU_EXCEEDED]: {
    code: 'response_too_large',
    httpStatus: 502,
    resync: false,
    temporary: false,
    mayHaveSucceeded: true,
    description: 'The vehicle received the request but its answer exceeded the MTU; the command may have run.',
    remedy: 'Do not resend blindly: read the vehicle state to see whether the command took effect.',
  },
  [F.MESSAGEFAULT_ERROR_REPEATED_COUNTER]: {
    code: 'repeated_counter',
    httpStatus: 502,
    resync: false,
    temporary: false,
    mayHaveSucceeded: true,
    description: 'The vehicle saw this counter before: the same signed message was delivered twice.',
    remedy: 'Do not resend blindly: read the vehicle state to see whether the first delivery took effect.',
  },
  [F.MESSAGEFAULT_ERROR_INVALID_KEY_HANDLE]: {
    code: 'invalid_key_handle',
    httpStatus: 502,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The signer was identified by a key handle the vehicle does not recognise.',
    remedy: 'Start a new session (handshake) identifying the key by its public key.',
  },
  [F.MESSAGEFAULT_ERROR_REQUIRES_RESPONSE_ENCRYPTION]: {
    code: 'requires_response_encryption',
    httpStatus: 500,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: 'The vehicle requires the request to ask for an encrypted response.',
    remedy: 'Report this as a proxy bug: requests must set FLAG_ENCRYPT_RESPONSE.',
  },
};

const NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(F).map(([name, value]) => [value as number, name]),
);

/** Every fault value the generated enum defines, ascending. */
export const ALL_FAULTS: readonly number[] = Object.freeze(
  Object.values(F)
    .map((v) => v as number)
    .sort((a, b) => a - b),
);

/**
 * Table entry for a fault number. Unknown numbers (newer firmware) map to a conservative
 * `unknown_fault`: not temporary, no resync, not executed (a fault means the message was
 * refused before execution).
 */
export function faultInfo(fault: number): FaultInfo {
  const row = TABLE[fault];
  if (row) return { fault, name: NAMES[fault] ?? `MESSAGEFAULT_${fault}`, ...row };
  return {
    fault,
    name: `MESSAGEFAULT_${fault}`,
    code: 'unknown_fault',
    httpStatus: 540,
    resync: false,
    temporary: false,
    mayHaveSucceeded: false,
    description: `The vehicle refused the command with an unrecognised fault (${fault}).`,
    remedy: 'Update the proxy; if it persists, the vehicle may need a restart, OTA update or service.',
  };
}

export interface RemedyContext {
  /** Key-pairing host, e.g. https://pairing.example (no trailing slash needed). */
  pairingUrl?: string;
  /** Domain the application key is registered under. */
  developerDomain?: string;
}

/** Remedy text with `{pairing_url}`/`{developer_domain}` filled where known. */
export function faultRemedy(fault: number, ctx: RemedyContext = {}): string {
  let text = faultInfo(fault).remedy;
  if (ctx.pairingUrl) text = text.replaceAll('{pairing_url}', ctx.pairingUrl.replace(/\/+$/, ''));
  if (ctx.developerDomain) text = text.replaceAll('{developer_domain}', ctx.developerDomain);
  return text;
}

/** The VcpError the proxy answers with when a fault is final (after any resync/retry). */
export function faultError(fault: number, ctx: RemedyContext = {}): VcpError {
  const info = faultInfo(fault);
  return new VcpError(info.code, `${info.description} ${faultRemedy(fault, ctx)}`, {
    status: info.httpStatus,
    mayHaveSucceeded: info.mayHaveSucceeded,
    temporary: info.temporary,
  });
}
