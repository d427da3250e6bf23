// The echogarden WASM packages ship no typings; each use site states the few functions it calls.
declare module '@echogarden/fvad-wasm';
declare module '@echogarden/speex-resampler-wasm';
