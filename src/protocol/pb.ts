/**
 * Typed re-export of the generated protobuf code (src/protocol/gen/pb.js + pb.d.ts).
 *
 * Import protobuf types from here, never from ./gen directly, so the generated layout can
 * change without touching callers. Field names are protobufjs camelCase
 * (`session_info_tag` → `sessionInfoTag`; leading-capital names keep their underscores:
 * `HMAC_Personalized_data` → `HMAC_PersonalizedData`, `AES_GCM_Personalized_data` →
 * `AES_GCM_PersonalizedData`, `AES_GCM_Response_data` → `AES_GCM_ResponseData`).
 * 64-bit integers are generated with --force-number (plain JS numbers).
 */
export {
  UniversalMessage,
  Signatures,
  Errors,
  Keys,
  VCSEC,
  CarServer,
  ManagedCharging,
  google,
} from './gen/pb.js';
