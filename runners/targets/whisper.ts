/**
 * @deprecated Whispers are a capability of a target's full client (`capabilities.whispers`,
 * `TargetClient.whisper`); import `whisperClientFor`, `WHISPER_TARGETS` and `WhisperClient` from
 * './index.ts'. Kept one merge cycle for runners/whispers/options.ts.
 */
export { WHISPER_TARGETS, whisperClientFor, type WhisperClient } from './index.ts';
