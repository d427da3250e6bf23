/** @switchboard/runtime: the voice runtime (audio layer and provider adapters; the engine and transports add their exports below). */
export * from './providers/types.ts';
export { createProviders, createStt, createTts, createLlm, STT_PROVIDERS, TTS_PROVIDERS, LLM_PROVIDERS } from './providers/index.ts';
export { validateProvider, type ProviderCredentials, type ValidationResult } from './providers/validate.ts';
export { mulawEncode, mulawDecode, mulawEncodeSample, mulawDecodeSample, MULAW_SILENCE } from './audio/mulaw.ts';
export { pcm16ToSamples, samplesToPcm16, rms, concatSamples } from './audio/pcm.ts';
export { convertAudio, convertBuffer, convertStream, sameFormat, bytesPerSecond, decodeToSamples, encodeSamples, type AudioConverter } from './audio/convert.ts';
export { Resampler, resample } from './audio/resampler.ts';
export { encodeWav, decodeWav, type WavAudio } from './audio/wav.ts';
export { StereoRecorder } from './audio/stereo-recorder.ts';
export { runtimeRoutes, startRuntimeServer, RuntimeCalls, DRAINING_CLOSE_CODE, type RuntimeOptions, type RuntimeServerOptions } from './server.ts';
export type { Prices as RuntimePrices } from './engine/types.ts';
